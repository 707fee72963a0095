/**
 * `deno task mcp`, spawned as an MCP host spawns a local server (the SDK's
 * `Client` + `StdioClientTransport`), against the service on a real port:
 * the same tools, reaching the API over the network with INBOX_API_KEY, the
 * API's refusals as tool errors with their codes; and a start without a key
 * (or with a bad URL) refused in one line that never shows the key.
 */
import assert from "node:assert/strict";
import { newApiKey } from "../_helpers/app.ts";
import { withService } from "../_helpers/harness.ts";
import { sendMail } from "../messages/_support.ts";
import { call, Client, ROOT, StdioClientTransport, structured, TOOL_NAMES, toolError } from "./_support.ts";

/** What the child gets besides the SDK's default environment (HOME, PATH...). */
function childEnv(extra: Record<string, string>): Record<string, string> {
  const denoDir = Deno.env.get("DENO_DIR");
  return { ...(denoDir ? { DENO_DIR: denoDir } : {}), ...extra };
}

/** Runs `deno task mcp` with `env` to its end; exit code and stderr. */
async function runTask(env: Record<string, string>): Promise<{ code: number; stderr: string; stdout: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "mcp"],
    cwd: ROOT.pathname,
    env: childEnv({ NO_COLOR: "1", ...env }),
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stderr: decode(out.stderr), stdout: decode(out.stdout) };
}

/** stderr without the line `deno task` prints before running the command. */
function ownLines(stderr: string): string[] {
  return stderr.split("\n").filter((l) => l.trim() !== "" && !l.startsWith("Task "));
}

Deno.test("deno task mcp refuses to start without INBOX_API_KEY, or with a bad INBOX_BASE_URL, in one line", async () => {
  const missing = await runTask({ PATH: Deno.env.get("PATH") ?? "", HOME: Deno.env.get("HOME") ?? "" });
  assert.equal(missing.code, 2);
  assert.equal(missing.stdout, "", "stdout is the protocol's alone");
  assert.deepEqual(ownLines(missing.stderr), [
    "INBOX_API_KEY is not set: set it to an API key of the Inbox Service (isk_...)",
  ]);

  const key = "isk_thisisasecretthatmustnotbeprinted";
  const badUrl = await runTask({
    PATH: Deno.env.get("PATH") ?? "",
    HOME: Deno.env.get("HOME") ?? "",
    INBOX_API_KEY: key,
    INBOX_BASE_URL: "localhost:8000",
  });
  assert.equal(badUrl.code, 2);
  const lines = ownLines(badUrl.stderr);
  assert.equal(lines.length, 1, badUrl.stderr);
  assert.match(lines[0]!, /^INBOX_BASE_URL /);
  assert.ok(!badUrl.stderr.includes(key) && !badUrl.stdout.includes(key), "the key is never printed");
});

Deno.test("over stdio: the tools call the API with INBOX_API_KEY; a sign-up code in three calls; API refusals keep their codes", async () => {
  await withService({ smtp: true, user: "pro" }, async ({ app, user, smtp }) => {
    const { id: keyId, key } = await newApiKey(app, user, "local-agent");
    const transport = new StdioClientTransport({
      command: Deno.execPath(),
      args: ["task", "mcp"],
      cwd: ROOT.pathname,
      env: childEnv({ INBOX_API_KEY: key, INBOX_BASE_URL: app.baseUrl }),
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (chunk: Uint8Array) => stderr += new TextDecoder().decode(chunk));
    const client = new Client({ name: "inbox-service-tests", version: "1.0.0" });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name), TOOL_NAMES);

      const inbox = structured<{ id: string; address: string }>(await call(client, "create_inbox", {}));
      await sendMail(smtp.port, {
        to: inbox.address,
        subject: "Your sign-in code",
        text: "Use 604213 to sign in. It expires in 5 minutes.",
      });
      const got = structured<{ code: string; untrusted: boolean }>(
        await call(client, "get_verification_code", { inboxId: inbox.id, timeoutMs: 10_000 }),
      );
      assert.equal(got.code, "604213");
      assert.equal(got.untrusted, true);

      toolError(await call(client, "get_message", { inboxId: "inb_unknown", messageId: "msg_x" }), "INBOX_NOT_FOUND");
      toolError(await call(client, "list_messages", { inboxId: inbox.id, limit: "many" }), "VALIDATION_ERROR");
      toolError(await call(client, "create_inbox", { ttlSeconds: 1 }), "VALIDATION_ERROR");

      // Here the stdio server is the API's client: a revoked key is the API's 401, told to the model.
      const revoked = await app.request(`/api/api-keys/${keyId}`, { method: "DELETE", cookie: user.cookie });
      assert.equal(revoked.status, 200);
      toolError(await call(client, "list_inboxes"), "UNAUTHORIZED");
    } finally {
      await client.close();
    }
    assert.ok(!stderr.includes(key), "the key is never printed");
  });
});

Deno.test("over stdio: a service that cannot be reached is a tool error, not a crash", async () => {
  // A port nothing listens on: bound, then released.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: ["task", "mcp"],
    cwd: ROOT.pathname,
    env: childEnv({ INBOX_API_KEY: "isk_whatever", INBOX_BASE_URL: `http://127.0.0.1:${port}` }),
    stderr: "pipe",
  });
  const client = new Client({ name: "inbox-service-tests", version: "1.0.0" });
  await client.connect(transport);
  try {
    const text = toolError(await call(client, "list_inboxes"), "SERVICE_UNAVAILABLE");
    assert.ok(text.includes(`http://127.0.0.1:${port}`), text);
    // Still serving: the next call gets its answer too.
    toolError(await call(client, "list_messages", { inboxId: "inb_x" }), "SERVICE_UNAVAILABLE");
  } finally {
    await client.close();
  }
});
