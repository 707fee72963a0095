/** Receiver-side verification: signatures, malformed input, replay protection, the typed event. */
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { Webhook } from "npm:standardwebhooks@1.1.1";
import {
  parseWebhookEvent,
  verifyWebhookSignature,
  type WebhookEvent,
  WebhookVerificationError,
} from "../../src/client/mod.ts";
import { standardWebhooksKey } from "../../src/client/verify.ts";
import { buildDeliveryHeaders, importSigningKey, signatureHeader } from "../../src/deliveries/signer.ts";
import { SECRET_EDGES, standardWebhooksKeyOf } from "../_helpers/secret_forms.ts";

const SECRET = "whsec-test-0123456789abcdef";
const NOW = Date.parse("2026-03-01T12:00:00Z");

/** The service's X-Webhook-Signature of `body` under SECRET (the signer takes the secret as an imported key). */
async function serviceSignature(body: string): Promise<string> {
  return await signatureHeader(await importSigningKey(SECRET), body);
}

function eventBody(createdAt = new Date(NOW).toISOString(), type = "inbox.created"): string {
  return JSON.stringify({
    id: "evt_0123456789",
    type,
    createdAt,
    data: { inboxId: "inb_1", address: "a@inbox.localhost", expiresAt: "2026-03-01T13:00:00.000Z" },
  });
}

/** The headers the service sends for `body`, signed at `timestamp` (Unix seconds). */
async function deliveryHeaders(body: string, timestamp = NOW / 1000, secret: string | null = SECRET) {
  return new Headers(
    await buildDeliveryHeaders({
      serviceName: "InboxService",
      webhookId: "wh_1",
      eventId: "evt_0123456789",
      eventType: "inbox.created",
      deliveryId: "dlv_1",
      timestamp,
      body,
      secrets: secret === null ? [] : [await importSigningKey(secret)],
    }),
  );
}

async function rejects(promise: Promise<unknown>, reason: string, message: RegExp): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof WebhookVerificationError, String(err));
    assert.equal(err.name, "WebhookVerificationError");
    assert.equal(err.reason, reason);
    assert.match(err.message, message);
    return true;
  });
}

Deno.test("verifyWebhookSignature: accepts the service's signature", async () => {
  const body = eventBody();
  const header = await serviceSignature(body);
  assert.match(header, /^sha256=[0-9a-f]{64}$/);
  assert.equal(await verifyWebhookSignature(body, header, SECRET), true);
});

Deno.test("verifyWebhookSignature: a known vector (HMAC-SHA256 of RFC 4231 case 2)", async () => {
  const header = "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843";
  assert.equal(await verifyWebhookSignature("what do ya want for nothing?", header, "Jefe"), true);
});

Deno.test("verifyWebhookSignature: wrong secret", async () => {
  const body = eventBody();
  const header = await serviceSignature(body);
  assert.equal(await verifyWebhookSignature(body, header, SECRET + "x"), false);
});

Deno.test("verifyWebhookSignature: tampered body (one character, whitespace, re-serialised JSON)", async () => {
  const body = eventBody();
  const header = await serviceSignature(body);
  assert.equal(await verifyWebhookSignature(body.replace("a@inbox", "b@inbox"), header, SECRET), false);
  assert.equal(await verifyWebhookSignature(body + " ", header, SECRET), false);
  assert.equal(await verifyWebhookSignature(JSON.stringify(JSON.parse(body), null, 2), header, SECRET), false);
});

Deno.test("verifyWebhookSignature: missing header", async () => {
  const body = eventBody();
  assert.equal(await verifyWebhookSignature(body, null, SECRET), false);
  assert.equal(await verifyWebhookSignature(body, undefined, SECRET), false);
  assert.equal(await verifyWebhookSignature(body, "", SECRET), false);
});

Deno.test("verifyWebhookSignature: malformed headers", async () => {
  const body = eventBody();
  const hex = (await serviceSignature(body)).slice("sha256=".length);
  for (
    const header of [
      hex, // no scheme
      `sha1=${hex}`,
      `SHA256=${hex}`,
      `sha256:${hex}`,
      `sha256=${hex.slice(1)}`, // 63 digits
      `sha256=${hex}0`, // 65 digits
      `sha256=${hex.slice(0, 62)}zz`, // not hex
      ` sha256=${hex}`,
      `sha256=${hex} `,
      `sha256=${hex},sha256=${hex}`,
      `sha256=${btoa(hex).slice(0, 64)}`,
    ]
  ) {
    assert.equal(await verifyWebhookSignature(body, header, SECRET), false, header);
  }
});

Deno.test("verifyWebhookSignature: uppercase hex is refused (the format is lowercase)", async () => {
  const body = eventBody();
  const header = await serviceSignature(body);
  const upper = "sha256=" + header.slice("sha256=".length).toUpperCase();
  assert.notEqual(upper, header);
  assert.equal(await verifyWebhookSignature(body, upper, SECRET), false);
});

Deno.test("verifyWebhookSignature: an empty secret is a configuration error", async () => {
  await assert.rejects(verifyWebhookSignature(eventBody(), "sha256=" + "0".repeat(64), ""), TypeError);
});

Deno.test("parseWebhookEvent: returns the typed event of a fresh, signed delivery", async () => {
  const body = eventBody();
  const event: WebhookEvent = await parseWebhookEvent(body, await deliveryHeaders(body), SECRET, { now: NOW });
  assert.equal(event.type, "inbox.created");
  if (event.type === "inbox.created") assert.equal(event.data.address, "a@inbox.localhost"); // narrowed by `type`
  assert.deepEqual(event, JSON.parse(body));
});

Deno.test("parseWebhookEvent: plain header records (any case, Node-style arrays) work too", async () => {
  const body = eventBody();
  const signature = await serviceSignature(body);
  const event = await parseWebhookEvent(body, { "X-Webhook-Signature": signature }, SECRET, { now: new Date(NOW) });
  assert.equal(event.id, "evt_0123456789");
  const again = await parseWebhookEvent(body, { "x-webhook-signature": [signature] }, SECRET, { now: NOW });
  assert.equal(again.id, "evt_0123456789");
});

Deno.test("parseWebhookEvent: refuses a missing, a wrong and a malformed signature", async () => {
  const body = eventBody();
  await rejects(parseWebhookEvent(body, new Headers(), SECRET, { now: NOW }), "missing_signature", /Missing/);
  await rejects(
    parseWebhookEvent(body, await deliveryHeaders(body, NOW / 1000, null), SECRET, { now: NOW }),
    "missing_signature",
    /X-Webhook-Signature/,
  );
  await rejects(
    parseWebhookEvent(body, await deliveryHeaders(body), "another-secret-0123456789", { now: NOW }),
    "invalid_signature",
    /Invalid/,
  );
  await rejects(
    parseWebhookEvent(body, { "x-webhook-signature": "sha256=abc" }, SECRET, { now: NOW }),
    "invalid_signature",
    /Invalid/,
  );
});

Deno.test("parseWebhookEvent: refuses a tampered body", async () => {
  const body = eventBody();
  const headers = await deliveryHeaders(body);
  const tampered = body.replace("inbox.created", "inbox.expired");
  await rejects(parseWebhookEvent(tampered, headers, SECRET, { now: NOW }), "invalid_signature", /Invalid/);
});

Deno.test("parseWebhookEvent: refuses a replayed old event (createdAt beyond the tolerance)", async () => {
  const body = eventBody(new Date(NOW - 301_000).toISOString());
  const headers = { "x-webhook-signature": await serviceSignature(body) };
  await rejects(parseWebhookEvent(body, headers, SECRET, { now: NOW }), "stale_event", /too old.*tolerance 300 s/);
  // Within the tolerance, or with a larger one, it passes.
  const ok = await parseWebhookEvent(body, headers, SECRET, { now: NOW, toleranceSeconds: 600 });
  assert.equal(ok.type, "inbox.created");
  const edge = eventBody(new Date(NOW - 299_000).toISOString());
  await parseWebhookEvent(edge, { "x-webhook-signature": await serviceSignature(edge) }, SECRET, { now: NOW });
});

Deno.test("parseWebhookEvent: refuses an event from beyond the tolerance in the future", async () => {
  const body = eventBody(new Date(NOW + 301_000).toISOString());
  const headers = { "x-webhook-signature": await serviceSignature(body) };
  await rejects(parseWebhookEvent(body, headers, SECRET, { now: NOW }), "future_event", /in the future/);
  const near = eventBody(new Date(NOW + 60_000).toISOString());
  await parseWebhookEvent(near, { "x-webhook-signature": await serviceSignature(near) }, SECRET, { now: NOW });
});

Deno.test("parseWebhookEvent: with Standard Webhooks headers, the signed attempt time is what ages", async () => {
  // A retry an hour after the event: createdAt is old but the attempt was signed just now.
  const body = eventBody(new Date(NOW - 3_600_000).toISOString());
  const retry = await deliveryHeaders(body, NOW / 1000 - 5);
  const event = await parseWebhookEvent(body, retry, SECRET, { now: NOW });
  assert.equal(event.id, "evt_0123456789");
  // The same captured attempt replayed ten minutes later is refused.
  await rejects(parseWebhookEvent(body, retry, SECRET, { now: NOW + 600_000 }), "stale_event", /webhook-timestamp/);
  // Moving the timestamp forward breaks the Standard Webhooks signature.
  const forged = new Headers(retry);
  forged.set("webhook-timestamp", String(NOW / 1000 + 590));
  await rejects(parseWebhookEvent(body, forged, SECRET, { now: NOW + 600_000 }), "invalid_signature", /webhook-sig/);
  // A far-future attempt time is refused too.
  const ahead = await deliveryHeaders(body, NOW / 1000 + 3600);
  await rejects(parseWebhookEvent(body, ahead, SECRET, { now: NOW }), "future_event", /future/);
});

Deno.test("parseWebhookEvent: refuses signed bodies that are not events", async () => {
  for (
    const body of [
      "not json",
      "[]",
      JSON.stringify({ id: "evt_1", type: "inbox.created", createdAt: new Date(NOW).toISOString() }),
      JSON.stringify({ id: "evt_1", type: "account.deleted", createdAt: new Date(NOW).toISOString(), data: {} }),
      JSON.stringify({ id: "evt_1", type: "test", createdAt: "yesterday", data: {} }),
    ]
  ) {
    const headers = { "x-webhook-signature": await serviceSignature(body) };
    await rejects(parseWebhookEvent(body, headers, SECRET, { now: NOW }), "malformed_event", /./);
  }
});

/** Headers signed for `secret` by independent code: node:crypto for X-Webhook-Signature, standardwebhooks for the rest. */
function independentHeaders(body: string, secret: string, standardKey: string, timestamp = NOW): Headers {
  const id = "evt_0123456789";
  return new Headers({
    "x-webhook-signature": `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`,
    "webhook-id": id,
    "webhook-timestamp": String(timestamp / 1000),
    "webhook-signature": new Webhook(standardKey).sign(id, new Date(timestamp), body),
  });
}

Deno.test("verify by the rules of the independent signers: X-Webhook-Signature with the secret as it is, webhook-signature as standardwebhooks reads it", async () => {
  const body = eventBody();
  for (const form of SECRET_EDGES) {
    const { secret, decoded, why } = form;
    const what = `${JSON.stringify(secret)} (${why})`;
    const utf8 = new TextEncoder().encode(secret);
    assert.deepEqual(
      standardWebhooksKey(secret),
      decoded ? Uint8Array.fromBase64(secret.slice("whsec_".length)) : utf8,
      `the Standard Webhooks key of ${what}`,
    );
    const headers = independentHeaders(body, secret, standardWebhooksKeyOf(form));
    assert.ok(await verifyWebhookSignature(body, headers.get("x-webhook-signature"), secret), what);
    assert.deepEqual(await parseWebhookEvent(body, headers, secret, { now: NOW }), JSON.parse(body), what);
  }
});

// The rule verifyWebhookSignature once followed with a whsec_<base64> secret: both headers keyed with the decoded bytes.
Deno.test("a whsec_<base64> secret: an X-Webhook-Signature keyed with its decoded bytes is refused, and so is a webhook-signature keyed with its UTF-8", async () => {
  const body = eventBody();
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  const secret = `whsec_${bytes.toBase64()}`;
  const decodedKeyed = `sha256=${createHmac("sha256", bytes).update(body).digest("hex")}`;
  assert.equal(await verifyWebhookSignature(body, decodedKeyed, secret), false);
  await rejects(
    parseWebhookEvent(body, { "x-webhook-signature": decodedKeyed }, secret, { now: NOW }),
    "invalid_signature",
    /X-Webhook-Signature/,
  );
  const utf8Keyed = independentHeaders(body, secret, standardWebhooksKeyOf({ secret, decoded: false }));
  assert.ok(await verifyWebhookSignature(body, utf8Keyed.get("x-webhook-signature"), secret));
  await rejects(parseWebhookEvent(body, utf8Keyed, secret, { now: NOW }), "invalid_signature", /webhook-signature/);
  // And what the service sends for it is accepted.
  assert.ok(await parseWebhookEvent(body, await deliveryHeaders(body, NOW / 1000, secret), secret, { now: NOW }));
});

Deno.test("during a rotation's overlap: both secrets given, in any order; the old one alone fails X-Webhook-Signature", async () => {
  const OLD = "the-old-secret-0123456789";
  const body = eventBody();
  // As the service signs during the overlap: the new secret first, then the old one.
  const headers = new Headers(
    buildDeliveryHeaders({
      serviceName: "InboxService",
      webhookId: "wh_1",
      eventId: "evt_0123456789",
      eventType: "inbox.created",
      deliveryId: "dlv_1",
      timestamp: NOW / 1000,
      body,
      secrets: [importSigningKey(SECRET), importSigningKey(OLD)],
    }),
  );
  for (const secrets of [[SECRET, OLD], [OLD, SECRET], [SECRET]]) {
    assert.deepEqual(await parseWebhookEvent(body, headers, secrets, { now: NOW }), JSON.parse(body), secrets.join());
    assert.equal(await verifyWebhookSignature(body, headers.get("x-webhook-signature"), secrets), true);
  }
  await rejects(parseWebhookEvent(body, headers, [OLD], { now: NOW }), "invalid_signature", /X-Webhook-Signature/);
  assert.equal(await verifyWebhookSignature(body, headers.get("x-webhook-signature"), [OLD]), false);
  await assert.rejects(verifyWebhookSignature(body, headers.get("x-webhook-signature"), []), TypeError);
});
