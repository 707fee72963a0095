/**
 * `deno task start` and the container install only the runtime dependencies.
 *
 * Deno installs every npm package of the lockfile it uses (with a
 * node_modules directory, `deno task` does so before running any task), not
 * just those the entry point imports. So the development tools (test
 * libraries, Playwright, the OpenAPI generator and linter, TypeScript for the
 * npm build) are locked in `deno.dev.lock`, which only the development tasks
 * use (`--lock=deno.dev.lock`), and `deno.lock`, the lockfile of `deno task
 * start` and of the image, holds exactly what `deno.json` imports need.
 */
import assert from "node:assert/strict";
import { createTestDb } from "../_helpers/db.ts";
import { serviceEnv, startService } from "../_helpers/process.ts";

const ROOT = new URL("../../", import.meta.url);

interface Lock {
  specifiers: Record<string, string>;
  npm: Record<string, { integrity: string; dependencies?: string[]; optionalDependencies?: string[] }>;
  workspace: { dependencies: string[] };
}

const readJson = async (name: string) => JSON.parse(await Deno.readTextFile(new URL(name, ROOT)));
const runtimeLock: Lock = await readJson("deno.lock");
const devLock: Lock = await readJson("deno.dev.lock");
const denoJson = await readJson("deno.json");

/** Tools that must never reach a start: what the development tasks and tests use. */
const DEV_TOOLS = [
  "playwright-core",
  "@redocly/cli",
  "openapi-typescript",
  "fast-check",
  "standardwebhooks",
  "@octokit/webhooks-methods",
  "typescript",
  "@types/nodemailer",
  // The build tree of the Scalar bundle, which is vendored instead (vendor/scalar/).
  "@scalar/api-reference",
  "vue",
  // The registry's postgres.js, which only the check of vendor/postgres/PATCHES.diff reads: the service runs the
  // vendored copy.
  "postgres",
];

/** `@scope/name@1.2.3_peer@4` -> `@scope/name`. */
function packageName(key: string): string {
  const at = key.indexOf("@", 1);
  return at < 0 ? key : key.slice(0, at);
}

/** `@scope/name@1.2.3_peer@4` -> `@scope/name@1.2.3`, as node_modules/.deno names the package's folder. */
function withoutPeers(key: string): string {
  const at = key.indexOf("@", 1);
  const peers = key.indexOf("_", at);
  return peers < 0 ? key : key.slice(0, peers);
}

/** The lock keys of a lockfile's packages reachable from its specifiers. */
function reachable(lock: Lock, roots: string[]): Set<string> {
  const byName = new Map<string, string[]>();
  for (const key of Object.keys(lock.npm)) byName.set(packageName(key), [...(byName.get(packageName(key)) ?? []), key]);
  const resolve = (dep: string): string => {
    if (lock.npm[dep]) return dep;
    const candidates = byName.get(dep) ?? [];
    assert.equal(candidates.length, 1, `${dep} names one package of the lock`);
    return candidates[0]!;
  };
  const seen = new Set<string>();
  const stack = roots.map((specifier) =>
    `${specifier.slice(4, specifier.lastIndexOf("@"))}@${lock.specifiers[specifier]}`
  );
  while (stack.length > 0) {
    const key = resolve(stack.pop()!);
    if (seen.has(key)) continue;
    seen.add(key);
    const entry = lock.npm[key]!;
    stack.push(...(entry.dependencies ?? []), ...(entry.optionalDependencies ?? []));
  }
  return seen;
}

/** Every `npm:` specifier written in the source files under `dir`. */
async function inlineSpecifiers(dir: URL): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  const walk = async (at: URL) => {
    for await (const entry of Deno.readDir(at)) {
      const url = new URL(entry.name + (entry.isDirectory ? "/" : ""), at);
      if (entry.isDirectory) await walk(url);
      else if (entry.name.endsWith(".ts")) {
        const text = await Deno.readTextFile(url);
        for (const m of text.matchAll(/["'](npm:[^"'\s]+)["']/g)) found.set(m[1]!, url.pathname);
      }
    }
  };
  await walk(dir);
  return found;
}

async function directorySize(path: string): Promise<number> {
  let total = 0;
  for await (const entry of Deno.readDir(path)) {
    const child = `${path}/${entry.name}`;
    if (entry.isSymlink) continue;
    if (entry.isDirectory) total += await directorySize(child);
    else total += (await Deno.stat(child)).size;
  }
  return total;
}

Deno.test("deno.lock holds what deno.json imports need and no development tool", async () => {
  // `hono/` -> `npm:/hono@4.13.19/` maps the subpaths of an import listed as well.
  const imported = Object.values(denoJson.imports as Record<string, string>).filter((v) => /^npm:[^/]/.test(v));
  assert.deepEqual([...runtimeLock.workspace.dependencies].sort(), [...imported].sort());
  // An inline `npm:` import run with the default lockfile would add a specifier here.
  assert.deepEqual(Object.keys(runtimeLock.specifiers).sort(), [...imported].sort());
  assert.deepEqual(
    [...reachable(runtimeLock, imported)].sort(),
    Object.keys(runtimeLock.npm).sort(),
    "every package of deno.lock is needed by an import",
  );
  for (const key of Object.keys(runtimeLock.npm)) {
    assert.ok(!DEV_TOOLS.includes(packageName(key)), `${key} is a development tool`);
  }
  // The source loads npm packages only as deno.json imports them (so deno.lock covers every
  // module a start, `listen` or `admin` loads), even where it names them in full (src/client).
  for (const [specifier, file] of await inlineSpecifiers(new URL("src/", ROOT))) {
    assert.ok(imported.includes(specifier), `${specifier} (${file}) is not an import of deno.json`);
  }
  assert.equal(denoJson.lock?.path, "./deno.lock");
  assert.equal(denoJson.lock?.frozen, true, "deno.lock is frozen: a command that would change it fails");
});

Deno.test("deno.dev.lock locks the development tools and the runtime packages at the same versions", () => {
  const devOnly = Object.keys(devLock.specifiers).filter((s) => !(s in runtimeLock.specifiers));
  for (const tool of ["playwright-core", "fast-check", "openapi-typescript", "@redocly/cli", "typescript"]) {
    assert.ok(devOnly.some((s) => s.startsWith(`npm:${tool}@`)), `deno.dev.lock locks ${tool}`);
  }
  assert.deepEqual(devLock.workspace, runtimeLock.workspace);
  for (const [key, entry] of Object.entries(runtimeLock.npm)) {
    assert.equal(devLock.npm[key]?.integrity, entry.integrity, `${key} is the same in both lockfiles`);
  }
  // Tests, benchmarks, type checks and npm tools load development tools: they use deno.dev.lock.
  const devCommand = /\bdeno (test|bench|check)\b|\bdeno run\b.*(\bnpm:|\stests\/)/;
  for (const [name, task] of Object.entries(denoJson.tasks as Record<string, string>)) {
    for (const command of task.split("&&").filter((c) => devCommand.test(c))) {
      assert.match(command, /--lock=deno\.dev\.lock/, `task ${name} uses deno.dev.lock: ${command}`);
    }
  }
  assert.doesNotMatch(denoJson.tasks.start, /deno\.dev\.lock/);
});

Deno.test("deno task start in a clean copy with an empty DENO_DIR installs only deno.lock's packages", async () => {
  const copy = await Deno.makeTempDir({ prefix: "inbox_start_" });
  const denoDir = await Deno.makeTempDir({ prefix: "inbox_deno_dir_" });
  const db = await createTestDb();
  try {
    // What a clone holds that a start can use; no node_modules, no deno.dev.lock.
    for (const name of ["deno.json", "deno.lock", "openapi.yaml"]) {
      await Deno.copyFile(new URL(name, ROOT), `${copy}/${name}`);
    }
    for (const dir of ["src", "generated", "vendor"]) {
      const out = await new Deno.Command("cp", { args: ["-r", new URL(dir, ROOT).pathname, `${copy}/${dir}`] })
        .output();
      assert.ok(out.success, `copy ${dir}`);
    }
    const service = await startService({ ...serviceEnv(db), DENO_DIR: denoDir }, {
      viaTask: true,
      cwd: copy,
      timeoutMs: 240_000,
    });
    try {
      const bundle = await fetch(`${service.url}/docs/scalar.js`);
      assert.equal(bundle.status, 200, "the vendored reference bundle is served");
      assert.ok((await bundle.arrayBuffer()).byteLength > 1_000_000);
    } finally {
      assert.equal(await service.stop(), 0);
    }

    const installed = [];
    for await (const entry of Deno.readDir(`${copy}/node_modules/.deno`)) {
      if (entry.isDirectory && entry.name !== "node_modules") installed.push(entry.name.replace("+", "/"));
    }
    const locked = new Set(Object.keys(runtimeLock.npm).map(withoutPeers));
    assert.ok(installed.length > 0);
    for (const pkg of installed) {
      assert.ok(locked.has(pkg), `${pkg} was installed but is not in deno.lock`);
      assert.ok(!DEV_TOOLS.includes(packageName(pkg)), `${pkg} is a development tool`);
    }
    const bytes = await directorySize(`${copy}/node_modules`);
    console.log(
      `node_modules after the first start: ${installed.length} packages, ${(bytes / 2 ** 20).toFixed(1)} MiB`,
    );
    // 408 MB when deno.lock also held the development tools and Scalar's build tree.
    assert.ok(bytes < 150 * 2 ** 20, `node_modules is ${bytes} bytes`);
  } finally {
    await db.close();
    await Deno.remove(copy, { recursive: true });
    await Deno.remove(denoDir, { recursive: true });
  }
});
