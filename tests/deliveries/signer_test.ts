/** Signing and headers are pure: checked here against an independent HMAC (node:crypto). */
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import {
  buildDeliveryHeaders,
  importSigningKey,
  signatureHeader,
  standardSignature,
} from "../../src/deliveries/signer.ts";
import { verifyWebhookSignature } from "../../src/client/verify.ts";
import { Webhook } from "npm:standardwebhooks@1.1.1";
import { hmacHex } from "../_helpers/hmac.ts";

const body = JSON.stringify({ id: "evt_1", type: "inbox.created", createdAt: "2026-01-01T00:00:00.000Z", data: {} });
const secret = "a-secret-of-24-characters";
/** The secret as the dispatcher holds it: an imported key. */
const key = (text: string) => importSigningKey(text);

Deno.test("X-Webhook-Signature is sha256= and the lowercase hex HMAC-SHA256 of the raw body", async () => {
  const expected = "sha256=" + createHmac("sha256", secret).update(body).digest("hex");
  assert.equal(await signatureHeader(await key(secret), body), expected);
  assert.match(expected, /^sha256=[0-9a-f]{64}$/);
  assert.notEqual(await signatureHeader(await key(secret), body + " "), expected, "any change to the body changes it");
  assert.notEqual(
    await signatureHeader(await key(secret + "x"), body),
    expected,
    "another secret gives another signature",
  );
});

Deno.test("the Standard Webhooks signature is v1, + base64 HMAC of id.timestamp.body", async () => {
  const expected = "v1," + createHmac("sha256", secret).update(`evt_1.1700000000.${body}`).digest("base64");
  assert.equal(await standardSignature(await key(secret), "evt_1", 1700000000, body), expected);
});

Deno.test("headers: exactly spec 6.2 plus Standard Webhooks', signed only with a secret", async () => {
  const input = {
    serviceName: "Acme",
    webhookId: "wh_1",
    eventId: "evt_1",
    eventType: "inbox.created",
    deliveryId: "dlv_1",
    timestamp: 1700000000,
    body,
  };
  const signed = await buildDeliveryHeaders({ ...input, secret: await key(secret) });
  assert.deepEqual(Object.keys(signed).sort(), [
    "Content-Type",
    "User-Agent",
    "X-Delivery-ID",
    "X-Webhook-Event",
    "X-Webhook-ID",
    "X-Webhook-Signature",
    "webhook-id",
    "webhook-signature",
    "webhook-timestamp",
  ]);
  assert.equal(signed["Content-Type"], "application/json");
  assert.equal(signed["User-Agent"], "Acme-Webhook/1.0");
  assert.equal(signed["X-Webhook-ID"], "wh_1");
  assert.equal(signed["X-Webhook-Event"], "inbox.created");
  assert.equal(signed["X-Delivery-ID"], "dlv_1");
  assert.equal(signed["webhook-id"], "evt_1");
  assert.equal(signed["webhook-timestamp"], "1700000000");
  assert.equal(signed["X-Webhook-Signature"], await signatureHeader(await key(secret), body));

  const unsigned = await buildDeliveryHeaders({ ...input, secret: null });
  assert.equal(unsigned["X-Webhook-Signature"], undefined);
  assert.equal(unsigned["webhook-signature"], undefined);
  assert.equal(unsigned["X-Delivery-ID"], "dlv_1");
});

Deno.test("a whsec_<base64> secret signs with the bytes of its base64 part, as Standard Webhooks libraries read it", async () => {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  const whsec = `whsec_${bytes.toBase64()}`;
  const headers = await buildDeliveryHeaders({
    serviceName: "InboxService",
    webhookId: "wh_1",
    eventId: "evt_1",
    eventType: "inbox.created",
    deliveryId: "dlv_1",
    timestamp: Math.floor(Date.now() / 1000),
    body,
    secret: await importSigningKey(whsec),
  });
  // The standardwebhooks library decodes whsec_ secrets itself; it throws when the signature does not verify.
  new Webhook(whsec).verify(body, headers);
  const raw = await crypto.subtle.importKey("raw", bytes, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const expected = new Uint8Array(await crypto.subtle.sign("HMAC", raw, new TextEncoder().encode(body))).toHex();
  assert.equal(headers["X-Webhook-Signature"], `sha256=${expected}`);
  assert.ok(await verifyWebhookSignature(body, headers["X-Webhook-Signature"], whsec));
  // Any other secret is its UTF-8 bytes, as before.
  const plain = await importSigningKey("a-plain-secret-of-some-length");
  assert.equal(await signatureHeader(plain, body), `sha256=${await hmacHex("a-plain-secret-of-some-length", body)}`);
});
