/**
 * The test commands the documents give work inside the repository. A test
 * run there needs the development lockfile (deno.dev.lock: the test
 * libraries), which `deno task` passes: so every task that runs tests or
 * benchmarks names it, and every documented `deno test` of the repository's
 * own tests (a path under tests/) is a task, or names it itself.
 */
import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url);
const DEV_LOCK = "--lock=deno.dev.lock";

/** README.md, every document under docs/, and tests/bench/README.md. */
async function documents(): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const path of ["README.md", "tests/bench/README.md"]) {
    out.set(path, await Deno.readTextFile(new URL(path, ROOT)));
  }
  for (const entry of Deno.readDirSync(new URL("docs/", ROOT))) {
    if (entry.name.endsWith(".md")) {
      out.set(`docs/${entry.name}`, await Deno.readTextFile(new URL(`docs/${entry.name}`, ROOT)));
    }
  }
  return out;
}

Deno.test("every task that runs deno test or deno bench passes the development lockfile", async () => {
  const tasks: Record<string, string> = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT))).tasks;
  const running = Object.entries(tasks).filter(([, command]) => /\bdeno (test|bench)\b/.test(command));
  assert.ok(running.some(([name]) => name === "test") && running.some(([name]) => name === "test:file"));
  for (const [name, command] of running) {
    for (const part of command.split("&&").filter((p) => /\bdeno (test|bench)\b/.test(p))) {
      assert.ok(part.includes(DEV_LOCK), `task ${name}: ${part.trim()} lacks ${DEV_LOCK}`);
    }
  }
});

Deno.test("every documented deno test of the repository's tests is a task or passes the development lockfile", async () => {
  for (const [path, text] of await documents()) {
    for (const [command] of text.matchAll(/\bdeno test\b[^`\n]*/g)) {
      if (!/(?<![\w/.-])tests\//.test(command)) continue; // a reader's own test file, in their project
      assert.ok(command.includes(DEV_LOCK), `${path}: "${command}": use deno task test:file <path>`);
    }
  }
  const readme = (await documents()).get("README.md")!;
  assert.match(readme, /deno task test:file tests\//, "README gives the task for one test file");
});
