/**
 * The MCP Inspector's CLI (`@modelcontextprotocol/inspector-cli`, a
 * development tool locked in deno.dev.lock), an MCP client written by
 * others, lists the seven tools of both transports and calls one over HTTP.
 *
 * Its `build/index.js` is run with Deno directly: its `build/cli.js` only
 * spawns `node` on that same file. It reads its own package.json as
 * `../package.json` when a `../package.json` exists relative to the working
 * directory (else two levels up, which is outside the package), so it runs
 * in a scratch directory whose parent holds one; the Deno flags name the
 * project's config and development lockfile by absolute path.
 */
import assert from "node:assert/strict";
import { newApiKey } from "../_helpers/app.ts";
import { withService } from "../_helpers/harness.ts";
import { ROOT, TOOL_NAMES } from "./_support.ts";

const INSPECTOR = "npm:@modelcontextprotocol/inspector-cli@1.0.3/build/index.js";

/** Runs the inspector CLI with `args`; its parsed JSON output. */
async function inspect(args: string[], env: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const scratch = await Deno.makeTempDir({ prefix: "inspector_" });
  try {
    await Deno.writeTextFile(`${scratch}/package.json`, "{}");
    await Deno.mkdir(`${scratch}/run`);
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        `--config=${ROOT.pathname}deno.json`,
        `--lock=${ROOT.pathname}deno.dev.lock`,
        INSPECTOR,
        ...args,
      ],
      cwd: `${scratch}/run`,
      env,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(out.stdout);
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, `inspector ${args.join(" ")}:\n${stdout}\n${stderr}`);
    return JSON.parse(stdout);
  } finally {
    await Deno.remove(scratch, { recursive: true });
  }
}

function toolNames(listing: Record<string, unknown>): string[] {
  return (listing.tools as { name: string }[]).map((t) => t.name);
}

Deno.test("the MCP Inspector CLI lists the tools over HTTP and over stdio, and calls one", async () => {
  await withService({ user: "pro" }, async ({ app, user }) => {
    const { key } = await newApiKey(app, user, "inspector");
    const auth = ["--header", `Authorization: Bearer ${key}`];

    const overHttp = await inspect([`${app.baseUrl}/mcp`, "--transport", "http", "--method", "tools/list", ...auth]);
    assert.deepEqual(toolNames(overHttp), TOOL_NAMES);

    const created = await inspect([
      `${app.baseUrl}/mcp`,
      "--method",
      "tools/call",
      "--tool-name",
      "create_inbox",
      "--tool-arg",
      "localPart=inspected",
      ...auth,
    ]);
    assert.equal((created.structuredContent as { address: string }).address, "inspected@inbox.localhost");

    // The stdio server is `deno task mcp` of this project; the inspector hands its environment on.
    const overStdio = await inspect(
      // The command's first word before `--`, its arguments after (so that its flags are not the inspector's).
      [Deno.execPath(), "--method", "tools/list", "--", "task", `--config=${ROOT.pathname}deno.json`, "mcp"],
      { INBOX_API_KEY: key, INBOX_BASE_URL: app.baseUrl },
    );
    assert.deepEqual(toolNames(overStdio), TOOL_NAMES);
  });
});
