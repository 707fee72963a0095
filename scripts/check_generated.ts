/**
 * Fails when `generated/api.d.ts` is not what `deno task gen` would write from
 * `openapi.yaml` now, so a spec change cannot land without its types.
 *
 * It runs the gen task's own command (read from deno.json, so the
 * openapi-typescript version is never stated twice) into a temporary file
 * and compares bytes.
 *
 * Usage: deno run -A scripts/check_generated.ts [--spec FILE] [--generated FILE]
 * (the options exist to try the check on copies; the defaults are the real files).
 */
import { parseArgs } from "node:util";

const ROOT = new URL("../", import.meta.url);
const STALE = "generated/ is stale: run deno task gen";

/** The gen task's argv with its input and output replaced. */
export function genCommand(task: string, spec: string, output: string): string[] {
  const argv = task.trim().split(/\s+/);
  const out = argv.indexOf("-o");
  const input = argv.indexOf("openapi.yaml");
  if (argv[0] !== "deno" || out < 0 || out + 1 >= argv.length || input < 0) {
    throw new Error(`cannot read the gen task of deno.json: ${task}`);
  }
  argv[0] = Deno.execPath();
  argv[input] = spec;
  argv[out + 1] = output;
  return argv;
}

/** The 1-based number of the first line where two texts differ, or 0 when equal. */
export function firstDifferentLine(a: string, b: string): number {
  if (a === b) return 0;
  const al = a.split("\n");
  const bl = b.split("\n");
  for (let i = 0; i < Math.max(al.length, bl.length); i++) if (al[i] !== bl[i]) return i + 1;
  return 0;
}

async function readOrNull(path: string): Promise<string | null> {
  try {
    return await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw e;
  }
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    args: Deno.args,
    options: { spec: { type: "string" }, generated: { type: "string" } },
  });
  const root = ROOT.pathname;
  const cwd = Deno.cwd();
  const abs = (p: string) => p.startsWith("/") ? p : `${cwd}/${p}`;
  const spec = values.spec ? abs(values.spec) : "openapi.yaml";
  const committedPath = values.generated ? abs(values.generated) : `${root}generated/api.d.ts`;

  const denoJson = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT)));
  const task: unknown = denoJson.tasks?.gen;
  if (typeof task !== "string") throw new Error("deno.json has no gen task");

  const dir = await Deno.makeTempDir({ prefix: "check_generated_" });
  try {
    const fresh = `${dir}/api.d.ts`;
    const [cmd, ...args] = genCommand(task, spec, fresh);
    // Run from the project root, as `deno task gen` does, so the same
    // deno.json, lockfile and node_modules resolve the generator.
    const run = await new Deno.Command(cmd!, { args, cwd: root, stdout: "piped", stderr: "piped" }).output();
    if (!run.success) {
      console.error(new TextDecoder().decode(run.stdout) + new TextDecoder().decode(run.stderr));
      console.error(`openapi-typescript failed (exit ${run.code})`);
      return 2;
    }
    const expected = await Deno.readTextFile(fresh);
    const actual = await readOrNull(committedPath);
    if (actual === null) {
      console.error(`${STALE} (${committedPath} does not exist)`);
      return 1;
    }
    const line = firstDifferentLine(actual, expected);
    if (actual !== expected) {
      console.error(`${STALE} (${committedPath} differs from a fresh generation at line ${line})`);
      return 1;
    }
    console.log("generated/api.d.ts is up to date");
    return 0;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) Deno.exit(await main());
