/**
 * `deno task listen --forward-to` as a user runs it: a real service, a real
 * local HTTP receiver, `listen` as a child process. Every event arrives with
 * the body and headers of a real delivery, signed with the secret `listen`
 * printed, verified here with `verifyWebhookSignature`, `parseWebhookEvent`,
 * @octokit/webhooks-methods, node:crypto's createHmac and the standardwebhooks
 * library; cutting the stream's connection mid-burst loses nothing; Ctrl-C
 * exits 0. (tests/client/interop_test.ts runs `listen` with every form of
 * secret beside the service's own senders.)
 */
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { verify as octokitVerify } from "npm:@octokit/webhooks-methods@6.0.0";
import { Webhook } from "npm:standardwebhooks@1.1.1";
import { parseWebhookEvent, verifyWebhookSignature } from "../../src/client/mod.ts";
import { metricValue, newApiKey, newUser } from "../_helpers/app.ts";
import { withService } from "../_helpers/harness.ts";
import { waitUntil } from "../_helpers/wait.ts";
import { collectLines } from "../_helpers/process.ts";
import { freePort } from "../_helpers/ports.ts";
import { forward, newSecret, readOptions } from "../../src/listen/mod.ts";
import { importSigningKey } from "../../src/deliveries/signer.ts";

const ROOT = new URL("../../", import.meta.url);

/** A TCP proxy to `port` whose open connections a test can cut. */
function cuttableProxy(port: number) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const open = new Set<Deno.Conn>();
  (async () => {
    for await (const client of listener) {
      const upstream = await Deno.connect({ hostname: "127.0.0.1", port }).catch(() => undefined);
      if (!upstream) {
        client.close();
        continue;
      }
      open.add(client);
      open.add(upstream);
      const pipe = (from: Deno.Conn, to: Deno.Conn) =>
        from.readable.pipeTo(to.writable).catch(() => {}).finally(() => {
          for (const c of [from, to]) {
            open.delete(c);
            try {
              c.close();
            } catch { /* already closed */ }
          }
        });
      void pipe(client, upstream);
      void pipe(upstream, client);
    }
  })().catch(() => {});
  return {
    port: (listener.addr as Deno.NetAddr).port,
    cutAll: () => {
      for (const c of open) {
        try {
          c.close();
        } catch { /* already closed */ }
      }
      open.clear();
    },
    close: () => listener.close(),
  };
}

Deno.test("listen forwards every event signed with the secret it printed, loses nothing when the stream is cut, exits 0 on Ctrl-C", async () => {
  await withService({ systemClock: true }, async ({ app }) => {
    const user = await newUser(app, "pro"); // API keys need Pro
    const { key } = await newApiKey(app, user);
    const received: { body: string; headers: Headers }[] = [];
    const receiver = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
      received.push({ body: await req.text(), headers: req.headers });
      return new Response("ok");
    });
    const proxy = cuttableProxy(Number(new URL(app.baseUrl).port));
    const child = new Deno.Command("deno", {
      args: [
        "task",
        "--quiet",
        "listen",
        "--forward-to",
        `http://127.0.0.1:${receiver.addr.port}/hooks`,
        "--base-url",
        `http://127.0.0.1:${proxy.port}`,
      ],
      cwd: ROOT,
      env: { INBOX_API_KEY: key, NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const { lines, done: reading } = collectLines(child.stdout);
    try {
      await waitUntil(() => lines.some((l) => l.includes("signing secret is whsec_")), 30_000, () => lines.join("\n"));
      const secret = /(whsec_\S+)/.exec(lines.find((l) => l.includes("signing secret"))!)![1]!;
      await waitUntil(
        async () => await metricValue(app.baseUrl, "event_streams") === 1,
        10_000,
        () => "listen is not streaming",
      );

      const create = async (n: number) => {
        for (let i = 0; i < n; i++) {
          const res = await app.request("/api/inboxes", { method: "POST", json: {}, cookie: user.cookie });
          assert.equal(res.status, 201);
          await res.body?.cancel();
        }
      };
      await create(5);
      await waitUntil(() => received.length >= 2, 10_000, () => `${received.length} forwarded`);
      proxy.cutAll(); // mid-burst
      await create(5);
      await waitUntil(() => received.length >= 10, 20_000, () => `${received.length} forwarded after the cut`);

      const log = ((await (await app.request("/api/events?limit=100", { cookie: user.cookie })).json()).data as {
        id: string;
      }[]).map((e) => e.id);
      assert.equal(log.length, 10);
      assert.deepEqual(received.map((r) => JSON.parse(r.body).id), log, "every event once, in order, across the cut");
      const standard = new Webhook(secret);
      for (const r of received) {
        const signature = r.headers.get("x-webhook-signature")!;
        // Keyed with the printed string itself, as GitHub-style code reads a secret (the base64 is not decoded).
        assert.ok(await octokitVerify(secret, r.body, signature), "@octokit/webhooks-methods verifies it");
        assert.equal(signature, `sha256=${createHmac("sha256", secret).update(r.body).digest("hex")}`);
        assert.ok(await verifyWebhookSignature(r.body, signature, secret), "X-Webhook-Signature verifies");
        const event = await parseWebhookEvent(r.body, r.headers, secret);
        assert.equal(event.type, "inbox.created");
        assert.equal(r.headers.get("x-webhook-event"), "inbox.created");
        assert.equal(r.headers.get("webhook-id"), event.id);
        standard.verify(r.body, Object.fromEntries(r.headers)); // throws when it does not verify
      }
      assert.ok(
        !(await verifyWebhookSignature(
          received[0]!.body,
          received[0]!.headers.get("x-webhook-signature"),
          "whsec_" + "A".repeat(32),
        )),
      );
      await waitUntil(
        () => lines.filter((l) => / inbox\.created evt_\S+ -> 200 \d+ms$/.test(l)).length >= 10,
        5_000,
        () => lines.join("\n"),
      );

      child.kill("SIGINT");
      const status = await child.status;
      assert.equal(status.code, 0, "Ctrl-C exits 0");
    } finally {
      // SIGINT first, which `deno task` passes on: a SIGKILL would leave listen running with stdout open, and a
      // failed assertion above would then hang here instead of being reported.
      const kill = (signal: Deno.Signal) => {
        try {
          child.kill(signal);
        } catch { /* exited */ }
      };
      kill("SIGINT");
      const last = setTimeout(() => kill("SIGKILL"), 10_000);
      await child.status;
      clearTimeout(last);
      await reading.catch(() => {});
      await child.stderr.cancel().catch(() => {});
      proxy.close();
      await receiver.shutdown();
    }
  });
});

Deno.test("a forward that cannot connect says why (the cause of fetch's error), not only 'fetch failed'", async () => {
  const key = await importSigningKey(newSecret());
  const event = { id: "evt_1", type: "inbox.created", createdAt: new Date().toISOString(), data: {} } as never;
  const result = await forward(event, `http://127.0.0.1:${freePort()}/hooks`, key);
  assert.equal(result.status, 0);
  assert.match(result.error ?? "", /fetch failed: .*(refused|os error)/i);
});

Deno.test("--secret takes any webhook secret (16 to 256 characters); without it a new whsec_<base64> of 24 bytes", () => {
  const env = (name: string) => name === "INBOX_API_KEY" ? "isk_test" : undefined;
  const read = (...secret: string[]) => readOptions(["--forward-to", "http://localhost:3000/hooks", ...secret], env);
  assert.match(read().secret, /^whsec_[A-Za-z0-9+/]{32}$/);
  assert.equal(Uint8Array.fromBase64(read().secret.slice("whsec_".length)).length, 24);
  assert.notEqual(read().secret, read().secret);
  for (const secret of ["a".repeat(16), "plain-sëcret-0123456789", "whsec_not*base64!at-all_1234", "x".repeat(256)]) {
    assert.equal(read("--secret", secret).secret, secret);
  }
  for (const secret of ["a".repeat(15), "x".repeat(257), ""]) {
    assert.throws(() => read("--secret", secret), /--secret must be 16 to 256 characters/);
  }
});
