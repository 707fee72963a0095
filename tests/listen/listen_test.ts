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
import { startTcpProxy } from "../_helpers/tcp_proxy.ts";
import { connectionCause, forward, listen, newSecret, readOptions } from "../../src/listen/mod.ts";
import { importSigningKey } from "../../src/deliveries/signer.ts";
import { generateApiKey } from "../../src/api_keys/key_format.ts";
import { UNAUTHORIZED_HINTS } from "../../src/auth/hints.ts";

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

/** `deno task listen` as a child process, its stdout and stderr collected line by line. */
function spawnListen(args: string[], env: Record<string, string>) {
  const child = new Deno.Command("deno", {
    args: ["task", "--quiet", "listen", ...args],
    cwd: ROOT,
    env: { NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const out = collectLines(child.stdout);
  const err = collectLines(child.stderr);
  return {
    child,
    stdout: out.lines,
    stderr: err.lines,
    /** Both streams, for failure messages. */
    text: () => `stdout:\n${out.lines.join("\n")}\nstderr:\n${err.lines.join("\n")}`,
    /**
     * Ends it: SIGINT first, which `deno task` passes on (a SIGKILL would leave
     * listen running with its pipes open, and this would hang instead of
     * reporting a failed assertion), SIGKILL after 10 s.
     */
    async stop(): Promise<Deno.CommandStatus> {
      const kill = (signal: Deno.Signal) => {
        try {
          child.kill(signal);
        } catch { /* exited */ }
      };
      kill("SIGINT");
      const last = setTimeout(() => kill("SIGKILL"), 10_000);
      const status = await child.status;
      clearTimeout(last);
      await Promise.all([out.done, err.done]).catch(() => {});
      return status;
    },
  };
}

/** `listen` from the service at `servicePort` (a proxy's) to `/hooks` of the receiver at `receiverPort`. */
function listenThrough(servicePort: number, receiverPort: number, key: string) {
  return spawnListen([
    "--forward-to",
    `http://127.0.0.1:${receiverPort}/hooks`,
    "--base-url",
    `http://127.0.0.1:${servicePort}`,
  ], { INBOX_API_KEY: key });
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
    const listen = listenThrough(proxy.port, receiver.addr.port, key);
    const lines = listen.stdout;
    try {
      await waitUntil(() => lines.some((l) => l.startsWith("Ready. ")), 30_000, listen.text);
      assert.equal(lines[0]!.startsWith("Your webhook signing secret is whsec_"), true, listen.text());
      assert.equal(
        lines[1],
        `Ready. Forwarding events from http://127.0.0.1:${proxy.port} to http://127.0.0.1:${receiver.addr.port}/hooks`,
      );
      const secret = /(whsec_\S+)/.exec(lines[0]!)![1]!;
      // Ready once the stream is open: the service counts it.
      await waitUntil(
        async () => await metricValue(app.baseUrl, "event_streams") === 1,
        2_000,
        () => "listen said it was ready, but no stream is open",
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

      assert.equal((await listen.stop()).code, 0, "Ctrl-C exits 0");
    } finally {
      await listen.stop();
      proxy.close();
      await receiver.shutdown();
    }
  });
});

Deno.test("listen with the service unreachable: no ready line, one line per try with the URL and the cause, 1 s then longer; ready once the stream opens; a cut stream resumes", async () => {
  await withService({ systemClock: true }, async ({ app }) => {
    const user = await newUser(app, "pro");
    const { key } = await newApiKey(app, user);
    const received: string[] = [];
    const receiver = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
      received.push(JSON.parse(await req.text()).id);
      return new Response("ok");
    });
    // The service behind a proxy that is down: connections to its port are refused.
    const proxy = startTcpProxy({ hostname: "127.0.0.1", port: Number(new URL(app.baseUrl).port) });
    proxy.cut();
    const url = `http://127.0.0.1:${proxy.port}/api/events/stream`;
    const listen = listenThrough(proxy.port, receiver.addr.port, key);
    const refused = () => listen.stderr.filter((l) => l.startsWith(`Cannot reach ${url} (connection refused); `));
    try {
      await waitUntil(() => refused().length >= 3, 30_000, listen.text);
      assert.deepEqual(
        refused().slice(0, 3),
        [1, 2, 4].map((s) => `Cannot reach ${url} (connection refused); trying again in ${s} s (Ctrl-C to stop)`),
      );
      assert.ok(!listen.stdout.some((l) => l.startsWith("Ready.")), "no ready line while nothing is open");
      assert.ok(listen.stdout.some((l) => l.startsWith("Your webhook signing secret is whsec_")));

      proxy.restore();
      await waitUntil(() => listen.stdout.some((l) => l.startsWith("Ready.")), 15_000, listen.text);
      assert.ok(refused().length <= 4, "no try after the stream opened");
      const create = async () => {
        const res = await app.request("/api/inboxes", { method: "POST", json: {}, cookie: user.cookie });
        assert.equal(res.status, 201);
        await res.body?.cancel();
      };
      await create();
      await waitUntil(() => received.length === 1, 10_000, listen.text);

      // The service goes away while streaming, events happen meanwhile, then it is back.
      const before = refused().length;
      proxy.cut();
      await waitUntil(
        () => listen.stderr.some((l) => l.startsWith(`The event stream ${url} was cut (`)),
        10_000,
        listen.text,
      );
      await create();
      await create();
      await waitUntil(() => refused().length > before, 10_000, listen.text);
      proxy.restore();
      await waitUntil(() => received.length === 3, 20_000, listen.text);
      assert.ok(listen.stderr.includes(`Connected to ${url} again; forwarding resumes`), listen.text());
      const log = ((await (await app.request("/api/events?limit=100", { cookie: user.cookie })).json()).data as {
        id: string;
      }[]).map((e) => e.id);
      assert.deepEqual(received, log, "every event once, in order, across the outage (Last-Event-ID)");
      assert.equal(listen.stdout.filter((l) => l.startsWith("Ready.")).length, 1, "one ready line");
      assert.ok(!listen.text().includes(key), "the key is never printed");
      assert.equal((await listen.stop()).code, 0, "Ctrl-C exits 0, also while retrying");
    } finally {
      await listen.stop();
      proxy.close();
      await receiver.shutdown();
    }
  });
});

Deno.test("listen with a refused API key exits 1 with one line naming --api-key and INBOX_API_KEY, never the key", async () => {
  await withService({ systemClock: true }, async ({ app }) => {
    const unknown = generateApiKey().key;
    const typo = unknown.slice(0, -1) + (unknown.endsWith("A") ? "B" : "A");
    for (const [key, hint] of [[unknown, UNAUTHORIZED_HINTS.unknownKey], [typo, UNAUTHORIZED_HINTS.malformedKey]]) {
      const listen = spawnListen(
        ["--forward-to", "http://127.0.0.1:3000/hooks", "--base-url", app.baseUrl, "--api-key", key!],
        {},
      );
      const status = await Promise.race([
        listen.child.status,
        new Promise<undefined>((r) => setTimeout(() => r(undefined), 20_000)),
      ]);
      const result = await listen.stop();
      assert.ok(status, `listen did not stop by itself: ${listen.text()}`);
      assert.equal(result.code, 1, listen.text());
      assert.deepEqual(listen.stderr, [
        `The service refused the API key: ${hint}. Pass a valid key with --api-key isk_... or INBOX_API_KEY`,
      ]);
      assert.ok(!listen.stdout.some((l) => l.startsWith("Ready.")), listen.text());
      assert.ok(!listen.text().includes(key!), "the key is never printed");
    }
  });
});

Deno.test("connection causes read as a person would say them", () => {
  const fetchError = (cause: string) => new TypeError("fetch failed", { cause: new Error(cause) });
  assert.equal(
    connectionCause(fetchError(
      "error sending request for url (http://127.0.0.1:1/): client error (Connect): tcp connect error: Connection refused (os error 111)",
    )),
    "connection refused",
  );
  assert.equal(
    connectionCause(fetchError(
      "error sending request for url (http://x.invalid/): client error (Connect): dns error: failed to lookup address information: Name or service not known",
    )),
    "host not found",
  );
  assert.equal(connectionCause(new TypeError("error reading a body from connection")), "connection lost");
  assert.equal(connectionCause(new Error("no answer within 10000 ms")), "timed out (no answer within 10000 ms)");
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

Deno.test("listen forwards webhook.disabled and webhook.enabled, signed, and parseWebhookEvent takes them", async () => {
  await withService({ systemClock: true, receiver: true, user: "pro" }, async ({ app, user, receiver }) => {
    const { key } = await newApiKey(app, user);
    const got: { body: string; headers: Headers }[] = [];
    const local = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
      got.push({ body: await req.text(), headers: req.headers });
      return new Response("ok");
    });
    const stop = new AbortController();
    const printed: string[] = [];
    const options = readOptions(
      ["--forward-to", `http://127.0.0.1:${local.addr.port}/hooks`, "--base-url", app.baseUrl],
      (name) => name === "INBOX_API_KEY" ? key : undefined,
    );
    const following = listen(options, stop.signal, { print: (l) => printed.push(l), warn: (l) => printed.push(l) })
      .catch((err) => {
        if (!stop.signal.aborted) throw err;
      });
    try {
      await waitUntil(() => printed.some((l) => l.startsWith("Ready")), 10_000, () => printed.join("\n"));
      receiver.respond({ status: 500 });
      const res = await app.request("/api/user-webhooks", {
        method: "POST",
        json: { url: receiver.url("/down"), events: ["inbox.created"] },
        cookie: user.cookie,
      });
      const { id } = await res.json();
      for (let i = 0; i < 5; i++) {
        (await app.request("/api/inboxes", { method: "POST", json: {}, cookie: user.cookie })).body?.cancel();
      }
      await app.deps.deliveries.queue.drain();
      (await app.request(`/api/user-webhooks/${id}`, { method: "PATCH", json: { active: true }, cookie: user.cookie }))
        .body?.cancel();
      await waitUntil(() => got.length === 7, 10_000, () => `${got.length} forwarded\n${printed.join("\n")}`);
      const events = [];
      for (const { body, headers } of got) events.push(await parseWebhookEvent(body, headers, options.secret));
      assert.deepEqual(events.map((e) => e.type), [
        ...Array(5).fill("inbox.created"),
        "webhook.disabled",
        "webhook.enabled",
      ]);
      const disabled = events[5]!;
      if (disabled.type === "webhook.disabled") {
        assert.deepEqual([disabled.data.webhookId, disabled.data.failureCount], [id, 5]);
      }
      assert.equal(got[5]!.headers.get("x-webhook-event"), "webhook.disabled");
      assert.ok(printed.some((l) => /webhook\.disabled evt_\S+ -> 200/.test(l)), printed.join("\n"));
    } finally {
      stop.abort();
      await following;
      await local.shutdown();
    }
  });
});
