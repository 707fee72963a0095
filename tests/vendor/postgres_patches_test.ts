/**
 * The vendored postgres.js is the registry's postgres@3.4.9 plus exactly the
 * patches of `vendor/postgres/PATCHES.diff`, each marked in the code: an edit
 * of the vendored files that is not in the stored diff (or a diff that no
 * longer matches the files) fails here, so every change to the driver is
 * written down, reviewed and described in PATCHED.md and docs/workarounds.md.
 */
import assert from "node:assert/strict";
import { PATCHES_FILE, vendoredDiff } from "../../scripts/postgres_patches.ts";
import { firstDifferentLine } from "../../scripts/check_generated.ts";

const stored = await Deno.readTextFile(PATCHES_FILE);

Deno.test("vendor/postgres/PATCHES.diff is the diff between postgres@3.4.9 and the vendored files", async () => {
  const actual = await vendoredDiff();
  const line = firstDifferentLine(stored, actual);
  assert.ok(
    line === 0,
    `PATCHES.diff differs from the vendored files from line ${line}:\n` +
      `  stored: ${stored.split("\n")[line - 1] ?? "(end)"}\n  actual: ${actual.split("\n")[line - 1] ?? "(end)"}\n` +
      "run `deno task patches:postgres`, mark the edit in the code, and describe it in vendor/postgres/PATCHED.md " +
      "and docs/workarounds.md",
  );
});

/** The hunks of a unified diff, each with the file it belongs to. */
function hunks(diff: string): { file: string; lines: string[] }[] {
  const out: { file: string; lines: string[] }[] = [];
  let file = "";
  for (const line of diff.split("\n")) {
    if (line.startsWith("+++ ")) file = line.slice(4).split("\t")[0]!;
    else if (line.startsWith("@@")) out.push({ file, lines: [] });
    else if (out.length > 0 && !line.startsWith("diff ") && !line.startsWith("--- ")) out.at(-1)!.lines.push(line);
  }
  return out;
}

Deno.test("every hunk of PATCHES.diff in the code is marked 'Inbox Service' in its own lines", () => {
  const all = hunks(stored);
  assert.ok(all.length > 0, "PATCHES.diff has hunks");
  // package.json cannot hold a comment: PATCHED.md describes its trimming.
  const code = all.filter((h) => !h.file.endsWith(".json"));
  const unmarked = code.filter((h) => !h.lines.some((l) => l.startsWith("+") && l.includes("Inbox Service")));
  assert.deepEqual(
    unmarked.map((h) => `${h.file}: ${h.lines.find((l) => /^[-+]/.test(l))}`),
    [],
    "hunks without an 'Inbox Service' comment among their added lines",
  );
});
