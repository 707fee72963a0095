/**
 * README's local HTTPS receiver, run as written: the `openssl req` line makes
 * the certificate, the service (a process) starts with the variables of the
 * README's start line (WEBHOOK_TRUSTED_HOSTS, WEBHOOK_CA_CERTS), the receiver of "Verifying
 * deliveries" runs as a child process (its import and port the only changes),
 * a real delivery reaches it and verifies, and the README's `$BODY` lines
 * give the signature by hand with openssl, with the README's secret and with
 * a `whsec_<base64>` one.
 */
import assert from "node:assert/strict";
import { apiAt, newApiKey, newOperatorAccount } from "../_helpers/app.ts";
import { createTestDb } from "../_helpers/db.ts";
import { serviceEnv, startService } from "../_helpers/process.ts";
import { hmacHex } from "../_helpers/hmac.ts";
import { freePort } from "../_helpers/ports.ts";
import { waitUntil } from "../_helpers/wait.ts";

const README = await Deno.readTextFile(new URL("../../docs/webhooks.md", import.meta.url));
const CLIENT = new URL("../../src/client/mod.ts", import.meta.url);
/** The secret README's webhook registration chooses. */
const SECRET = "a-long-random-secret";

/** The README's fenced code block that contains `marker`. */
function readmeBlock(marker: string): string {
  const blocks = [...README.matchAll(/```\w*\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const found = blocks.filter((b) => b.includes(marker));
  assert.equal(found.length, 1, `one README block contains ${marker}`);
  return found[0]!;
}

async function sh(script: string, cwd: string): Promise<string> {
  const out = await new Deno.Command("sh", { args: ["-c", script], cwd, stdout: "piped", stderr: "piped" }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  assert.ok(out.success, `${script}\n${stdout}${new TextDecoder().decode(out.stderr)}`);
  return stdout;
}

Deno.test("README's local HTTPS receiver: its certificate, WEBHOOK_TRUSTED_HOSTS and WEBHOOK_CA_CERTS, a verified delivery, the openssl check of $BODY", async () => {
  const dir = await Deno.makeTempDir({ prefix: "inbox_receiver_" });
  try {
    const setup = readmeBlock("openssl req").trim().split("\n");
    await sh(setup.find((l) => l.startsWith("openssl req"))!, dir);
    // The webhook variables of the README's start line, $PWD being the directory of the certificate.
    const startLine = setup.find((l) => l.endsWith("deno task start"))!;
    const env = Object.fromEntries(
      [...startLine.matchAll(/(WEBHOOK_\w+)=(\S+)/g)].map(([, name, value]) => [name!, value!.replace("$PWD", dir)]),
    );
    assert.equal(env.WEBHOOK_TRUSTED_HOSTS, "localhost");
    assert.equal(env.WEBHOOK_CA_CERTS, `${dir}/localhost.pem`);

    const port = freePort();
    const receiverCode = readmeBlock("// receiver.ts:");
    assert.match(receiverCode, /port: 8443\b/);
    await Deno.writeTextFile(
      `${dir}/receiver.ts`,
      receiverCode.replace(`"./src/client/mod.ts"`, JSON.stringify(CLIENT.href)).replace("port: 8443", `port: ${port}`),
    );
    const receiver = new Deno.Command("deno", {
      args: ["run", "--allow-net", "--allow-read", "--allow-write", "--allow-env", "receiver.ts"],
      cwd: dir,
      env: { INBOX_WEBHOOK_SECRET: SECRET, NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const output = Promise.all([new Response(receiver.stdout).text(), new Response(receiver.stderr).text()]);
    try {
      await waitUntil(
        async () => {
          const conn = await Deno.connect({ hostname: "127.0.0.1", port }).catch(() => undefined);
          conn?.close();
          return conn !== undefined;
        },
        60_000,
        () => "the receiver does not listen",
      );

      const db = await createTestDb();
      const service = await startService(serviceEnv(db, env));
      try {
        const api = apiAt(service.url);
        const { key: auth } = await newApiKey(api, await newOperatorAccount(api, "pro"));
        const hook = await api.request("/api/user-webhooks", {
          method: "POST",
          auth,
          json: { url: `https://localhost:${port}/hooks`, events: ["inbox.created"], secret: SECRET },
        });
        assert.equal(hook.status, 201, await hook.clone().text());
        const { id } = await hook.json();
        const inbox = await api.request("/api/inboxes", { method: "POST", auth, json: { ttlSeconds: 600 } });
        assert.equal(inbox.status, 201);
        const { id: inboxId } = await inbox.json();

        // The receiver answers 200 only when parseWebhookEvent verified the delivery.
        const deliveries = async () =>
          (await (await api.request(`/api/user-webhooks/${id}/deliveries`, { auth })).json()).data as {
            status: string;
          }[];
        await waitUntil(
          async () => (await deliveries()).some((d) => d.status === "succeeded"),
          20_000,
          async () => `no successful delivery: ${JSON.stringify(await deliveries())}`,
        );
        const body = await Deno.readTextFile(`${dir}/last-body.json`);
        assert.equal(JSON.parse(body).data.inboxId, inboxId);

        const byHandBlock = readmeBlock("BODY=$(cat last-body.json)");
        const byHand = await sh(byHandBlock, dir);
        assert.equal(/= ([0-9a-f]{64})$/.exec(byHand.trim())?.[1], await hmacHex(SECRET, body));
        // The same lines with a whsec_<base64> secret, as `listen` prints one: the whole string is the key.
        const whsec = `whsec_${crypto.getRandomValues(new Uint8Array(24)).toBase64()}`;
        assert.ok(byHandBlock.includes(`'${SECRET}'`), "the README sets the secret in one place");
        const byHandWhsec = await sh(byHandBlock.replace(`'${SECRET}'`, `'${whsec}'`), dir);
        assert.equal(/= ([0-9a-f]{64})$/.exec(byHandWhsec.trim())?.[1], await hmacHex(whsec, body));
      } finally {
        await service.stop();
        await db.close();
      }
    } finally {
      receiver.kill("SIGTERM");
      await receiver.status;
      await output;
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
