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
import { SECRET_EDGES, standardWebhooksKeyOf } from "../_helpers/secret_forms.ts";

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
  const signed = await buildDeliveryHeaders({ ...input, secrets: [await key(secret)] });
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

  const unsigned = await buildDeliveryHeaders({ ...input, secrets: [] });
  assert.equal(unsigned["X-Webhook-Signature"], undefined);
  assert.equal(unsigned["webhook-signature"], undefined);
  assert.equal(unsigned["X-Delivery-ID"], "dlv_1");
});

// Was: "a whsec_<base64> secret signs with the bytes of its base64 part", for both headers. That keyed
// X-Webhook-Signature with the decoded bytes, which spec 6.2 does not: its key is the secret as registered.
Deno.test("a whsec_<base64> secret: X-Webhook-Signature keyed with the whole string, the Standard Webhooks signature with its decoded bytes", async () => {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  const whsec = `whsec_${bytes.toBase64()}`;
  const timestamp = Math.floor(Date.now() / 1000);
  const headers = buildDeliveryHeaders({
    serviceName: "InboxService",
    webhookId: "wh_1",
    eventId: "evt_1",
    eventType: "inbox.created",
    deliveryId: "dlv_1",
    timestamp,
    body,
    secrets: [importSigningKey(whsec)],
  });
  assert.equal(headers["X-Webhook-Signature"], `sha256=${createHmac("sha256", whsec).update(body).digest("hex")}`);
  assert.equal(headers["X-Webhook-Signature"], `sha256=${await hmacHex(whsec, body)}`);
  assert.equal(
    headers["webhook-signature"],
    `v1,${createHmac("sha256", bytes).update(`evt_1.${timestamp}.${body}`).digest("base64")}`,
  );
  // The standardwebhooks library decodes whsec_ secrets itself; it throws when the signature does not verify.
  new Webhook(whsec).verify(body, headers);
  assert.ok(await verifyWebhookSignature(body, headers["X-Webhook-Signature"], whsec));
});

Deno.test("the key of each scheme, at the edges of whsec_<base64>, as GitHub-style code and standardwebhooks read it", () => {
  const timestamp = new Date(1_700_000_000_000);
  for (const form of SECRET_EDGES) {
    const { secret, decoded, why } = form;
    const key = importSigningKey(secret);
    assert.equal(
      signatureHeader(key, body),
      `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`,
      `X-Webhook-Signature of ${secret} (${why}) is keyed with the secret as it is`,
    );
    // standardwebhooks signs with the key it reads from `whsec_...`: the secret itself when it decodes it.
    const library = new Webhook(standardWebhooksKeyOf(form));
    assert.equal(
      standardSignature(key, "evt_1", timestamp.getTime() / 1000, body),
      library.sign("evt_1", timestamp, body),
      `webhook-signature of ${secret} (${why}): ${decoded ? "decoded" : "its UTF-8 bytes"}`,
    );
  }
});

Deno.test("the signing key shows nothing of either key", () => {
  const key = importSigningKey(`whsec_${new Uint8Array(24).fill(9).toBase64()}`);
  assert.deepEqual(
    [JSON.stringify(key), Deno.inspect(key, { showHidden: true }), Object.keys(key), Object.values(key)],
    ["{}", "SigningSecret {}", [], []],
  );
});

Deno.test("two live secrets (a rotation's overlap): one v1 signature each, newest first; X-Webhook-Signature the newest's", () => {
  const newest = `whsec_${new Uint8Array(24).fill(9).toBase64()}`;
  const older = "the-secret-it-replaced-0123";
  const headers = buildDeliveryHeaders({
    serviceName: "InboxService",
    webhookId: "wh_1",
    eventId: "evt_1",
    eventType: "inbox.created",
    deliveryId: "dlv_1",
    timestamp: 1700000000,
    body,
    secrets: [key(newest), key(older)],
  });
  const message = `evt_1.1700000000.${body}`;
  assert.equal(
    headers["webhook-signature"],
    `v1,${createHmac("sha256", new Uint8Array(24).fill(9)).update(message).digest("base64")} ` +
      `v1,${createHmac("sha256", older).update(message).digest("base64")}`,
  );
  assert.equal(headers["X-Webhook-Signature"], `sha256=${createHmac("sha256", newest).update(body).digest("hex")}`);
});

Deno.test("secrets of every length around SHA-256's 64-byte block sign as HMAC does, over one key many times", () => {
  // The key's padded blocks are hashed once and copied for each message: a key longer than the block is hashed
  // first (RFC 2104), and no signature may disturb the next. Checked against node's createHmac and standardwebhooks.
  for (const length of [1, 24, 63, 64, 65, 128, 300]) {
    const text = "k".repeat(length - 1) + String(length % 10);
    const signing = key(text);
    const verifier = new Webhook(`whsec_${new TextEncoder().encode(text).toBase64()}`);
    for (const message of [body, "{}", JSON.stringify({ text: "é".repeat(100) }), body]) {
      const expected = `sha256=${createHmac("sha256", text).update(message).digest("hex")}`;
      assert.equal(signatureHeader(signing, message), expected, `${length} bytes`);
      const timestamp = Math.floor(Date.now() / 1000);
      const signature = standardSignature(signing, "evt_1", timestamp, message);
      verifier.verify(message, {
        "webhook-id": "evt_1",
        "webhook-timestamp": String(timestamp),
        "webhook-signature": signature,
      });
    }
  }
});
