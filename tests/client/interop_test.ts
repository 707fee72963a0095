/**
 * Every sender's signatures verify with implementations that are not ours:
 * @octokit/webhooks-methods and node:crypto's `createHmac("sha256", secret)`
 * (GitHub's `sha256=` scheme, the X-Webhook-Signature header) and npm
 * standardwebhooks (the webhook-id / webhook-timestamp / webhook-signature
 * headers), as well as with our verifyWebhookSignature and parseWebhookEvent.
 *
 * Senders: (a) a real delivery from the queue to an HTTPS receiver, (b) the
 * test endpoint, (c) a redelivery, (d) `listen` forwarding to a plain-HTTP
 * receiver; each with three forms of secret. The Standard Webhooks key of each
 * form is written out in the table, not computed by the project's own rule:
 * a checker that shares the signer's mistake would prove nothing (a whsec_
 * secret once keyed both headers with its decoded bytes, and only our own
 * verifier, which read it the same way, accepted that).
 */
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { verify as octokitVerify } from "npm:@octokit/webhooks-methods@6.0.0";
import { Webhook as StandardWebhook } from "npm:standardwebhooks@1.1.1";
import { createClient, parseWebhookEvent, verifyWebhookSignature } from "../../src/client/mod.ts";
import { listen, readOptions } from "../../src/listen/mod.ts";
import { metricValue, newApiKey } from "../_helpers/app.ts";
import { startHarness } from "../_helpers/harness.ts";
import type { ReceivedRequest } from "../_helpers/receiver.ts";
import { waitUntil } from "../_helpers/wait.ts";
import { type SecretForm, standardWebhooksKeyOf } from "../_helpers/secret_forms.ts";

interface NamedForm extends SecretForm {
  /** Also the path each sender posts this form's requests to. */
  name: string;
}

/** The key standardwebhooks takes for `secret` of this form (for `listen`, the secret it printed). */
const standardKey = (form: SecretForm, secret: string) => standardWebhooksKeyOf({ secret, decoded: form.decoded });

// The webhook's secret; for `listen`, its `--secret` (none for whsec_<base64>: then the secret it prints).
const FORMS: NamedForm[] = [
  {
    // Deliberately not ASCII: the key is the secret's UTF-8 bytes on every side.
    name: "plain",
    secret: "interop-secret-ünïcödé-0123456789",
    decoded: false,
  },
  {
    // The form `listen` prints: Standard Webhooks decode the base64, X-Webhook-Signature does not.
    name: "whsec-base64",
    secret: `whsec_${crypto.getRandomValues(new Uint8Array(24)).toBase64()}`,
    decoded: true,
  },
  {
    // A whsec_ prefix on something that is not base64: the whole string's UTF-8 bytes, for both schemes.
    name: "whsec-not-base64",
    secret: "whsec_not*base64!at-all_1234",
    decoded: false,
  },
];

const SENDERS = ["delivery", "test endpoint", "redelivery", "listen"] as const;
type Sender = typeof SENDERS[number];

/** What one sender sent with one form of secret, and the secret a receiver would configure. */
interface Captured {
  secret: string;
  requests: ReceivedRequest[];
}

/** The five verifications of one captured request, with `body` in place of the received one. */
async function verifyAll(req: ReceivedRequest, body: string, secret: string, standardKey: string) {
  const signature = req.headers["x-webhook-signature"];
  assert.ok(signature, "the request is signed");
  const settle = async <T>(f: () => T | Promise<T>): Promise<T | Error> => {
    try {
      return await f();
    } catch (err) {
      return err as Error;
    }
  };
  return {
    octokit: await settle(() => octokitVerify(secret, body, signature)),
    createHmac: signature === `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`,
    standard: await settle(() => new StandardWebhook(standardKey).verify(body, req.headers)),
    ours: await verifyWebhookSignature(body, signature, secret),
    parsed: await settle(() => parseWebhookEvent(body, req.headers, secret)),
  };
}

async function assertInterop(req: ReceivedRequest, secret: string, form: SecretForm, type: string): Promise<void> {
  assert.equal(req.method, "POST");
  assert.equal(req.headers["x-webhook-event"], type);
  const good = await verifyAll(req, req.body, secret, standardKey(form, secret));
  assert.equal(good.octokit, true, "@octokit/webhooks-methods accepts the X-Webhook-Signature");
  assert.equal(good.createHmac, true, 'X-Webhook-Signature is createHmac("sha256", secret) of the body');
  assert.deepEqual(good.standard, JSON.parse(req.body), "standardwebhooks accepts the webhook-signature");
  assert.equal(good.ours, true, "verifyWebhookSignature accepts it");
  assert.deepEqual(good.parsed, JSON.parse(req.body), "parseWebhookEvent returns the event");
  assert.equal((good.parsed as { type: string }).type, type);
  assert.equal((good.parsed as { id: string }).id, req.headers["webhook-id"]);

  for (
    const tampered of [
      req.body.replace(/"createdAt":"/, '"createdAt":"1'),
      req.body + "\n",
      JSON.stringify(JSON.parse(req.body), null, 1),
    ]
  ) {
    const bad = await verifyAll(req, tampered, secret, standardKey(form, secret));
    assert.equal(bad.octokit, false, "@octokit/webhooks-methods refuses a tampered body");
    assert.equal(bad.createHmac, false, "createHmac gives another digest for a tampered body");
    assert.ok(bad.standard instanceof Error, "standardwebhooks refuses a tampered body");
    assert.match(bad.standard.message, /signature/i);
    assert.equal(bad.ours, false, "verifyWebhookSignature refuses a tampered body");
    assert.ok(bad.parsed instanceof Error && bad.parsed.name === "WebhookVerificationError");
  }

  // The two rules part exactly where they should: only a whsec_<base64> secret is decoded, by the library too.
  if (form.decoded) {
    assert.throws(
      () => new StandardWebhook(standardWebhooksKeyOf({ secret, decoded: false })).verify(req.body, req.headers),
      /signature/i,
      "the webhook-signature of a whsec_<base64> secret is not keyed with the UTF-8 bytes of the whole secret",
    );
  } else if (secret.startsWith("whsec_")) {
    assert.throws(() => new StandardWebhook(secret), /incorrect/, "standardwebhooks cannot decode it either");
  }
}

/** A plain-HTTP receiver for `listen`, recording requests as the HTTPS receiver does. */
function plainReceiver() {
  const requests: ReceivedRequest[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    requests.push({
      method: req.method,
      path: new URL(req.url).pathname,
      headers: Object.fromEntries([...req.headers].map(([k, v]) => [k.toLowerCase(), v])),
      body: await req.text(),
      receivedAt: new Date(),
    });
    return new Response("ok");
  });
  return {
    requests,
    url: (path: string) => `http://127.0.0.1:${server.addr.port}${path}`,
    close: () => server.shutdown(),
  };
}

Deno.test("every sender, every form of secret: signatures verify with @octokit/webhooks-methods, createHmac, standardwebhooks and our verifier", async (t) => {
  // The wall clock: standardwebhooks checks the signature's timestamp against the real time.
  const h = await startHarness({ receiver: true, user: "pro", startDeliveries: true, systemClock: true });
  const { app, receiver, user } = h;
  const local = plainReceiver();
  const stop = new AbortController();
  const listening: Promise<void>[] = [];
  const captured = new Map<string, Captured | Error>();
  const key = (sender: Sender, form: NamedForm) => `${sender} ${form.name}`;
  const at = (requests: readonly ReceivedRequest[], path: string) => requests.filter((r) => r.path === path);
  try {
    const { key: apiKey } = await newApiKey(app, user);
    const client = createClient({ baseUrl: app.baseUrl, apiKey });

    // (d) `listen` as its flags start it, before the inbox exists, so that it forwards the inbox's event.
    const listenSecrets = new Map<NamedForm, string>();
    for (const form of FORMS) {
      try {
        const args = [
          "--forward-to",
          local.url(`/${form.name}`),
          "--base-url",
          app.baseUrl,
          "--events",
          "inbox.created",
        ];
        // whsec_<base64>: the secret `listen` generates and prints; the other forms are given with --secret.
        if (!form.decoded) args.push("--secret", form.secret);
        const options = readOptions(args, (name) => name === "INBOX_API_KEY" ? apiKey : undefined);
        const printed: string[] = [];
        listening.push(
          listen(options, stop.signal, { print: (line) => printed.push(line), warn: (line) => printed.push(line) })
            .catch((err) => {
              if (!stop.signal.aborted) throw err;
            }),
        );
        await waitUntil(() => printed.some((l) => l.includes("signing secret is")), 5_000, () => printed.join("\n"));
        const secret = /signing secret is (\S+)$/.exec(printed.find((l) => l.includes("signing secret is"))!)![1]!;
        if (form.decoded) assert.match(secret, /^whsec_[A-Za-z0-9+/]{32}$/);
        else assert.equal(secret, form.secret);
        listenSecrets.set(form, secret);
      } catch (err) {
        captured.set(key("listen", form), err as Error);
      }
    }
    await waitUntil(
      async () => await metricValue(app.baseUrl, "event_streams") === listenSecrets.size,
      10_000,
      () => "listen is not streaming",
    );

    const webhooks = new Map<NamedForm, string>();
    for (const form of FORMS) {
      const { data: webhook, error } = await client.webhooks.create({
        url: receiver.url(`/${form.name}`),
        events: ["inbox.created"],
        secret: form.secret,
      });
      assert.ok(webhook, JSON.stringify(error));
      webhooks.set(form, webhook.id);
      // (b) The test endpoint: a signed `test` event, sent synchronously.
      const { data: result } = await client.webhooks.test(webhook.id);
      assert.equal(result?.success, true, JSON.stringify(result));
    }

    // (a) A real event from the queue: inbox.created, to every webhook and every `listen`.
    const { data: inbox } = await client.inboxes.create({});
    assert.ok(inbox);
    await waitUntil(
      () => FORMS.every((f) => at(receiver.requests, `/${f.name}`).length === 2),
      10_000,
      () => `${receiver.requests.length} deliveries`,
    );
    await waitUntil(
      () => [...listenSecrets.keys()].every((f) => at(local.requests, `/${f.name}`).length === 1),
      10_000,
      () => `${local.requests.length} forwarded by listen`,
    );

    // (c) A redelivery of that delivery: the same event and body, a new X-Delivery-ID.
    for (const form of FORMS) {
      const delivered = at(receiver.requests, `/${form.name}`)[1]!;
      const { response, error } = await client.deliveries.redeliver(
        webhooks.get(form)!,
        delivered.headers["x-delivery-id"]!,
      );
      assert.equal(response.status, 202, JSON.stringify(error));
    }
    await waitUntil(
      () => FORMS.every((f) => at(receiver.requests, `/${f.name}`).length === 3),
      10_000,
      () => `${receiver.requests.length} deliveries and redeliveries`,
    );

    for (const form of FORMS) {
      const [test, delivery, redelivery] = at(receiver.requests, `/${form.name}`);
      assert.equal(redelivery!.body, delivery!.body);
      assert.equal(redelivery!.headers["webhook-id"], delivery!.headers["webhook-id"]);
      assert.notEqual(redelivery!.headers["x-delivery-id"], delivery!.headers["x-delivery-id"]);
      captured.set(key("test endpoint", form), { secret: form.secret, requests: [test!] });
      captured.set(key("delivery", form), { secret: form.secret, requests: [delivery!] });
      captured.set(key("redelivery", form), { secret: form.secret, requests: [redelivery!] });
      const listenSecret = listenSecrets.get(form);
      if (listenSecret) {
        captured.set(key("listen", form), { secret: listenSecret, requests: at(local.requests, `/${form.name}`) });
      }
    }
  } finally {
    stop.abort();
    await Promise.all(listening);
    await local.close();
    await h.close();
  }

  for (const sender of SENDERS) {
    for (const form of FORMS) {
      await t.step(`${sender}, ${form.name} secret`, async () => {
        const got = captured.get(key(sender, form));
        if (got instanceof Error) throw got;
        assert.ok(got && got.requests.length === 1, `one request from ${sender}`);
        for (const req of got.requests) {
          await assertInterop(req, got.secret, form, sender === "test endpoint" ? "test" : "inbox.created");
        }
      });
    }
  }
});
