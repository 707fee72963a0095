/**
 * The typed client and `listen` from another Deno project: a temporary
 * project outside the repository, with a deno.json of its own and none of
 * this repository's imports, imports src/client/mod.ts and
 * src/listen/mod.ts by path, calls the real service, and runs `listen` by
 * path (`deno run -A <path>/src/listen/mod.ts`).
 */
import assert from "node:assert/strict";
import { verifyWebhookSignature } from "../../src/client/mod.ts";
import { metricValue, newApiKey, newUser } from "../_helpers/app.ts";
import { withService } from "../_helpers/harness.ts";
import { waitUntil } from "../_helpers/wait.ts";
import { collectLines } from "../_helpers/process.ts";

const CLIENT = new URL("../../src/client/mod.ts", import.meta.url);
const LISTEN = new URL("../../src/listen/mod.ts", import.meta.url);

/** A Deno project in a temporary directory outside the repository. */
async function foreignProject(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "inbox_consumer_" });
  assert.ok(!dir.startsWith(new URL("../../", import.meta.url).pathname), "outside the repository");
  // Its own configuration, with an import map that knows nothing of ours.
  await Deno.writeTextFile(`${dir}/deno.json`, JSON.stringify({ imports: { "consumer/": "./" } }));
  return dir;
}

Deno.test("a Deno project outside the repository imports the client and listen by path and calls the service", async () => {
  await withService({ systemClock: true }, async ({ app }) => {
    const user = await newUser(app, "pro");
    const { key } = await newApiKey(app, user);
    const dir = await foreignProject();
    try {
      await Deno.writeTextFile(
        `${dir}/main.ts`,
        `import { createClient, verifyWebhookSignature } from "${CLIENT.href}";
import { newSecret, readOptions } from "${LISTEN.href}";
const [baseUrl, apiKey] = Deno.args;
const client = createClient({ baseUrl: baseUrl!, apiKey: apiKey! });
const { data: me } = await client.me();
const { data: inbox, error } = await client.inboxes.create({ ttlSeconds: 600 });
if (!inbox) throw new Error(error?.error);
const options = readOptions(["--forward-to", "http://localhost:3000/hooks"], () => apiKey);
const signed = await verifyWebhookSignature("{}", "sha256=" + "0".repeat(64), "secret");
console.log(JSON.stringify({ email: me?.email, inbox: inbox.id, forwardTo: options.forwardTo, secret: newSecret().startsWith("whsec_"), signed }));
`,
      );
      const out = await new Deno.Command("deno", {
        args: ["run", "-A", "main.ts", app.baseUrl, key],
        cwd: dir,
        stdout: "piped",
        stderr: "piped",
      }).output();
      const stderr = new TextDecoder().decode(out.stderr);
      assert.ok(out.success, stderr);
      assert.doesNotMatch(stderr, /not a dependency/);
      const result = JSON.parse(new TextDecoder().decode(out.stdout));
      assert.deepEqual(result, {
        email: user.email,
        inbox: result.inbox,
        forwardTo: "http://localhost:3000/hooks",
        secret: true,
        signed: false,
      });
      const res = await app.request(`/api/inboxes/${result.inbox}`, { cookie: user.cookie });
      assert.equal(res.status, 200, "the inbox the foreign project created exists");
      await res.body?.cancel();
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});

Deno.test("listen runs by path from a Deno project outside the repository and forwards signed events", async () => {
  await withService({ systemClock: true }, async ({ app }) => {
    const user = await newUser(app, "pro");
    const { key } = await newApiKey(app, user);
    const dir = await foreignProject();
    const received: { body: string; headers: Headers }[] = [];
    const receiver = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
      received.push({ body: await req.text(), headers: req.headers });
      return new Response("ok");
    });
    const child = new Deno.Command("deno", {
      args: [
        "run",
        "-A",
        LISTEN.pathname,
        "--forward-to",
        `http://127.0.0.1:${receiver.addr.port}/hooks`,
        "--base-url",
        app.baseUrl,
        "--api-key",
        key,
      ],
      cwd: dir,
      env: { NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const { lines, done: reading } = collectLines(child.stdout);
    const errors = new Response(child.stderr).text();
    try {
      await waitUntil(() => lines.some((l) => l.includes("signing secret is whsec_")), 60_000, () => lines.join("\n"));
      const secret = /(whsec_\S+)/.exec(lines.find((l) => l.includes("signing secret"))!)![1]!;
      await waitUntil(async () => await metricValue(app.baseUrl, "event_streams") === 1, 10_000, () => "no stream");
      const res = await app.request("/api/inboxes", { method: "POST", json: {}, cookie: user.cookie });
      assert.equal(res.status, 201);
      const inbox = await res.json();
      await waitUntil(() => received.length >= 1, 10_000, () => lines.join("\n"));
      const [delivery] = received;
      assert.equal(JSON.parse(delivery!.body).data.inboxId, inbox.id);
      assert.ok(await verifyWebhookSignature(delivery!.body, delivery!.headers.get("x-webhook-signature"), secret));
    } finally {
      child.kill("SIGINT");
      const status = await child.status;
      await reading;
      await receiver.shutdown();
      await Deno.remove(dir, { recursive: true });
      assert.equal(status.code, 0, await errors);
    }
  });
});
