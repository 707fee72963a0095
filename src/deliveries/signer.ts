/**
 * Pure signing and header building for deliveries: no I/O, so each rule has
 * a direct test. HMAC-SHA256 through Web Crypto.
 */

import { secretKeyBytes } from "../client/verify.ts";

const encoder = new TextEncoder();

/**
 * A webhook's secret, imported (`importSigningKey`): the dispatcher keeps
 * imported keys, which cannot be read back, so that a busy webhook is not
 * decrypted and imported again for every attempt.
 */
export type SigningSecret = CryptoKey;

/**
 * Imports a secret as a non-extractable HMAC-SHA256 key (both signatures use
 * the same key): the secret's UTF-8 bytes, or for a `whsec_<base64>` secret the
 * bytes of its base64 part, as Standard Webhooks libraries and the client's
 * `verifyWebhookSignature` read it (`secretKeyBytes`).
 */
export async function importSigningKey(secret: string): Promise<CryptoKey> {
  return await crypto.subtle.importKey("raw", secretKeyBytes(secret), { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
}

async function hmac(key: SigningSecret, message: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(message)));
}

/** Spec 6.2: `sha256=` + lowercase hex HMAC-SHA256 of the raw body, keyed with the secret. */
export async function signatureHeader(secret: SigningSecret, body: string): Promise<string> {
  return `sha256=${(await hmac(secret, body)).toHex()}`;
}

/**
 * Standard Webhooks: `v1,` + base64 HMAC-SHA256 of `id.timestamp.body`. The
 * key is the secret's UTF-8 bytes (Standard Webhooks libraries take it as
 * `whsec_` + base64 of those bytes).
 */
export async function standardSignature(
  secret: SigningSecret,
  eventId: string,
  timestamp: number,
  body: string,
): Promise<string> {
  return `v1,${(await hmac(secret, `${eventId}.${timestamp}.${body}`)).toBase64()}`;
}

/** Everything that goes into the headers of one attempt. */
export interface HeaderInput {
  serviceName: string;
  webhookId: string;
  eventId: string;
  eventType: string;
  deliveryId: string;
  /** Unix seconds of the attempt. */
  timestamp: number;
  /** The exact body; signed when `secret` is set. */
  body: string;
  secret: SigningSecret | null;
}

/** The headers of one attempt: spec 6.2, plus Standard Webhooks' beside them. */
export async function buildDeliveryHeaders(input: HeaderInput): Promise<Record<string, string>> {
  const headers: Record<string, string> = {
    "Content-Type": "application/json",
    "User-Agent": `${input.serviceName}-Webhook/1.0`,
    "X-Webhook-ID": input.webhookId,
    "X-Webhook-Event": input.eventType,
    "X-Delivery-ID": input.deliveryId,
    "webhook-id": input.eventId,
    "webhook-timestamp": String(input.timestamp),
  };
  if (input.secret !== null) {
    const key = typeof input.secret === "string" ? await importSigningKey(input.secret) : input.secret;
    headers["X-Webhook-Signature"] = await signatureHeader(key, input.body);
    headers["webhook-signature"] = await standardSignature(key, input.eventId, input.timestamp, input.body);
  }
  return headers;
}
