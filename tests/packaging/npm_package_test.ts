/**
 * `deno task build:npm` builds the client as an npm package that a Node
 * project outside the repository installs (`npm install` of the packed
 * tarball, as from a registry), imports as ES modules, type-checks against
 * its .d.ts files, and uses: real calls against the running service, and the
 * signature checks on a real signed delivery. Building and packing inside
 * the checkout leaves nothing for git to see.
 */
import assert from "node:assert/strict";
import { newApiKey } from "../_helpers/app.ts";
import { withService } from "../_helpers/harness.ts";

const ROOT = new URL("../../", import.meta.url);

async function run(cmd: string, args: string[], cwd: string | URL): Promise<string> {
  const out = await new Deno.Command(cmd, { args, cwd, stdout: "piped", stderr: "piped" }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  assert.ok(out.success, `${cmd} ${args.join(" ")}: ${stdout}${new TextDecoder().decode(out.stderr)}`);
  return stdout;
}

/** Uses the client from Node: registers a webhook, creates an inbox, reads it back. */
const CALLS = `import { createClient } from "@inbox-service/client";
const [baseUrl, apiKey, hookUrl] = process.argv.slice(2);
const client = createClient({ baseUrl, apiKey });
const { data: webhook, error } = await client.webhooks.create({ url: hookUrl, events: ["inbox.created"], secret: "node-secret-0123456789" });
if (!webhook) throw new Error(JSON.stringify(error));
const { data: inbox } = await client.inboxes.create({ ttlSeconds: 600 });
const { data: again } = await client.inboxes.get(inbox.id);
const { data: missing, error: notFound } = await client.webhooks.get("wh_missing");
console.log(JSON.stringify({ inbox: inbox.id, again: again.id, missing: missing ?? null, code: notFound.code }));
`;

/** Checks a delivery as a Node receiver would: the raw body and the headers as Node gives them. */
const VERIFY =
  `import { parseWebhookEvent, verifyWebhookSignature, WebhookVerificationError } from "@inbox-service/client";
import { readFileSync } from "node:fs";
const { body, headers } = JSON.parse(readFileSync(process.argv[2], "utf8"));
const secret = "node-secret-0123456789";
const event = await parseWebhookEvent(body, headers, secret);
let tampered = null;
try {
  await parseWebhookEvent(body.replace("inbox.created", "inbox.expired"), headers, secret);
} catch (err) {
  tampered = err instanceof WebhookVerificationError ? err.reason : String(err);
}
console.log(JSON.stringify({
  valid: await verifyWebhookSignature(body, headers["x-webhook-signature"], secret),
  wrongSecret: await verifyWebhookSignature(body, headers["x-webhook-signature"], "another-secret"),
  type: event.type,
  inboxId: event.data.inboxId,
  tampered,
}));
`;

/** Compiled by tsc against the package's .d.ts: the types are real, not \`any\`. */
const TYPED = `import { createClient, type Inbox, verifyWebhookSignature } from "@inbox-service/client";

const client = createClient({ baseUrl: "http://localhost:8000", apiKey: "isk_x" });

export async function typed(): Promise<Inbox | undefined> {
  const { data } = await client.inboxes.create({ ttlSeconds: 600 });
  const ok: boolean = await verifyWebhookSignature("{}", null, "secret");
  // @ts-expect-error ttlSeconds is a number
  await client.inboxes.create({ ttlSeconds: "600" });
  return ok ? data : undefined;
}
`;

Deno.test("deno task build:npm: a Node project installs the package, type-checks it, calls the service and verifies a delivery", async () => {
  const nodeVersion = (await run("node", ["--version"], ROOT)).trim();
  assert.ok(Number(/^v(\d+)\./.exec(nodeVersion)?.[1]) >= 20, `Node ${nodeVersion}`);
  const work = await Deno.makeTempDir({ prefix: "inbox_npm_" });
  try {
    const built = `${work}/package`;
    await run("deno", ["task", "--quiet", "build:npm", "--out", built], ROOT);
    const pkg = JSON.parse(await Deno.readTextFile(`${built}/package.json`));
    assert.equal(pkg.type, "module");
    assert.deepEqual(pkg.exports["."], { types: "./mod.d.ts", default: "./mod.js" });
    assert.deepEqual(pkg.dependencies, { "openapi-fetch": "0.17.0" });
    const tarball = JSON.parse(await run("npm", ["pack", built, "--json", "--pack-destination", work], work))[0]
      .filename;

    const consumer = `${work}/consumer`;
    await Deno.mkdir(consumer);
    await Deno.writeTextFile(
      `${consumer}/package.json`,
      JSON.stringify({ name: "consumer", private: true, type: "module" }),
    );
    await run("npm", ["install", "--no-audit", "--no-fund", `${work}/${tarball}`], consumer);
    await Deno.writeTextFile(`${consumer}/calls.mjs`, CALLS);
    await Deno.writeTextFile(`${consumer}/verify.mjs`, VERIFY);
    await Deno.writeTextFile(`${consumer}/typed.ts`, TYPED);
    await Deno.writeTextFile(
      `${consumer}/tsconfig.json`,
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          lib: ["ES2022", "DOM"],
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          noEmit: true,
          types: [],
        },
        files: ["typed.ts"],
      }),
    );
    // The TypeScript compiler of deno.dev.lock, reading the consumer's node_modules as Node resolves them.
    await run("deno", [
      "run",
      "-A",
      "--lock=deno.dev.lock",
      "npm:typescript@5.9.3/tsc",
      "-p",
      `${consumer}/tsconfig.json`,
    ], ROOT);

    await withService({ systemClock: true, receiver: true, user: "pro", startDeliveries: true }, async (h) => {
      const { key } = await newApiKey(h.app, h.user);
      const calls = JSON.parse(await run("node", ["calls.mjs", h.app.baseUrl, key, h.receiver.url("/hook")], consumer));
      assert.equal(calls.again, calls.inbox);
      assert.deepEqual({ missing: calls.missing, code: calls.code }, { missing: null, code: "WEBHOOK_NOT_FOUND" });

      const [delivery] = await h.receiver.waitFor(1, 20_000);
      await Deno.writeTextFile(`${work}/delivery.json`, JSON.stringify(delivery));
      const verified = JSON.parse(await run("node", ["verify.mjs", `${work}/delivery.json`], consumer));
      assert.deepEqual(verified, {
        valid: true,
        wrongSecret: false,
        type: "inbox.created",
        inboxId: calls.inbox,
        tampered: "invalid_signature",
      });
    });
  } finally {
    await Deno.remove(work, { recursive: true });
  }
});

Deno.test("deno task build:npm --pack, and npm pack of dist/npm in the checkout, leave git status as it was", async () => {
  const status = () => run("git", ["status", "--porcelain", "--untracked-files=all"], ROOT);
  const version = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT))).version;
  // Where a bare `npm pack ./dist/npm` run at the root writes its tarball.
  const stray = new URL(`inbox-service-client-${version}.tgz`, ROOT);
  const strayExisted = await Deno.stat(stray).then(() => true, () => false);
  const before = await status();
  try {
    const built = await run("deno", ["task", "--quiet", "build:npm", "--pack"], ROOT);
    const tarball = /^Packed into (.+\.tgz)$/m.exec(built)?.[1];
    assert.ok(tarball, built);
    assert.equal(tarball, new URL(`dist/inbox-service-client-${version}.tgz`, ROOT).pathname);
    assert.ok((await Deno.stat(tarball)).isFile);
    assert.ok((await Deno.stat(new URL("dist/npm/package.json", ROOT))).isFile);
    await run("npm", ["pack", "./dist/npm"], ROOT);
    assert.ok((await Deno.stat(stray)).isFile);
    assert.equal(await status(), before, "nothing new for git: dist/ and *.tgz are ignored");
  } finally {
    if (!strayExisted) await Deno.remove(stray).catch(() => {});
  }
});
