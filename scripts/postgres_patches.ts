/**
 * The diff between the registry's postgres@3.4.9 and the patched copy in
 * `vendor/postgres/` (its `src/`, `types/` and `package.json`), as `diff -ru`
 * writes it, stored in `vendor/postgres/PATCHES.diff`. An edit of the vendored
 * files that is not in that diff is an unreviewed patch:
 * `tests/vendor/postgres_patches_test.ts` regenerates it and compares.
 *
 * Both trees are copied into a temporary directory with their times set to
 * the epoch and compared under fixed names (`postgres@3.4.9/...` and
 * `vendor/postgres/...`), so the text depends on the files alone. The
 * pristine package is the one of the lockfile: the import below makes Deno
 * install it, and its path is where that import resolves.
 *
 * Usage: deno task patches:postgres          (writes vendor/postgres/PATCHES.diff)
 *        deno task patches:postgres --check  (exit 1 when the stored diff differs)
 */
import "npm:postgres@3.4.9";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The upstream version the vendored copy is patched from. */
export const UPSTREAM = "postgres@3.4.9";
/** What is vendored of the package (the cjs/ and cf/ builds and the README are not). */
const VENDORED = ["src", "types", "package.json"];

const ROOT = fileURLToPath(new URL("../", import.meta.url));
/** The vendored copy. */
export const VENDOR_DIR = join(ROOT, "vendor/postgres");
/** Where the diff is kept. */
export const PATCHES_FILE = join(VENDOR_DIR, "PATCHES.diff");

/** The installed pristine package's directory (src/index.js is its ES module entry). */
export function pristineDir(): string {
  return dirname(dirname(fileURLToPath(import.meta.resolve("npm:postgres@3.4.9"))));
}

async function copyTree(from: string, to: string): Promise<void> {
  const info = await Deno.stat(from);
  if (info.isDirectory) {
    await Deno.mkdir(to, { recursive: true });
    for await (const entry of Deno.readDir(from)) await copyTree(join(from, entry.name), join(to, entry.name));
  } else {
    await Deno.copyFile(from, to);
  }
  // diff -u prints each file's time: the epoch, so that only content counts.
  await Deno.utime(to, 0, 0);
}

/** `diff -ru` of the pristine package and the vendored copy, as it would be stored. */
export async function vendoredDiff(): Promise<string> {
  const work = await Deno.makeTempDir({ prefix: "postgres-patches-" });
  try {
    const upstream = join(work, UPSTREAM);
    const vendored = join(work, "vendor/postgres");
    for (const name of VENDORED) {
      await copyTree(join(pristineDir(), name), join(upstream, name));
      await copyTree(join(VENDOR_DIR, name), join(vendored, name));
    }
    await Deno.utime(upstream, 0, 0);
    await Deno.utime(vendored, 0, 0);
    const out = await new Deno.Command("diff", {
      args: ["-ru", UPSTREAM, "vendor/postgres"],
      cwd: work,
      env: { TZ: "UTC", LC_ALL: "C" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    // 0: no difference, 1: differences, anything else: diff itself failed.
    if (out.code > 1) throw new Error(`diff failed (${out.code}): ${new TextDecoder().decode(out.stderr)}`);
    return new TextDecoder().decode(out.stdout);
  } finally {
    await Deno.remove(work, { recursive: true });
  }
}

if (import.meta.main) {
  const diff = await vendoredDiff();
  if (Deno.args.includes("--check")) {
    const stored = await Deno.readTextFile(PATCHES_FILE).catch(() => "");
    if (stored !== diff) {
      console.error(
        "vendor/postgres/PATCHES.diff is not the diff of the vendored files: run deno task patches:postgres",
      );
      Deno.exit(1);
    }
    console.log("vendor/postgres/PATCHES.diff matches the vendored files");
  } else {
    await Deno.writeTextFile(PATCHES_FILE, diff);
    console.log(`Wrote ${PATCHES_FILE} (${diff.split("\n").length - 1} lines)`);
  }
}
