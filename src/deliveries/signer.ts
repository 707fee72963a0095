/**
 * Pure signing and header building for deliveries: no I/O, so each rule has
 * a direct test. HMAC-SHA256 through node:crypto's `createHmac`, which signs
 * at once: Web Crypto's `sign` is an asynchronous operation answered on a
 * later turn of the event loop, and with two signatures per attempt the turns
 * of a busy loop made preparing an attempt take 4 ms on average in the
 * delivery benchmark (a profile of the stages of one attempt).
 */

import { createHmac } from "node:crypto";
import { secretKeyBytes } from "../client/verify.ts";

/**
 * A webhook's secret, imported (`importSigningKey`): the dispatcher keeps
 * imported keys so that a busy webhook is not decrypted again for every
 * attempt. The key bytes stay private to this module (nothing reads them
 * back, nor logs them: the object has no enumerable fields).
 */
export class SigningSecret {
  readonly #bytes: Uint8Array;
  constructor(bytes: Uint8Array) {
    this.#bytes = bytes;
  }
  /** HMAC-SHA256 of `message` with this key. */
  sign(message: string): Uint8Array {
    return new Uint8Array(createHmac("sha256", this.#bytes).update(message).digest());
  }
}

/**
 * A secret as an HMAC-SHA256 key (both signatures use the same key): the
 * secret's UTF-8 bytes, or for a `whsec_<base64>` secret the bytes of its
 * base64 part, as Standard Webhooks libraries and the client's
 * `verifyWebhookSignature` read it (`secretKeyBytes`).
 */
export function importSigningKey(secret: string): SigningSecret {
  return new SigningSecret(secretKeyBytes(secret));
}

/** Spec 6.2: `sha256=` + lowercase hex HMAC-SHA256 of the raw body, keyed with the secret. */
export function signatureHeader(secret: SigningSecret, body: string): string {
  return `sha256=${secret.sign(body).toHex()}`;
}

/**
 * Standard Webhooks: `v1,` + base64 HMAC-SHA256 of `id.timestamp.body`. The
 * key is the secret's UTF-8 bytes (Standard Webhooks libraries take it as
 * `whsec_` + base64 of those bytes).
 */
export function standardSignature(
  secret: SigningSecret,
  eventId: string,
  timestamp: number,
  body: string,
): string {
  return `v1,${secret.sign(`${eventId}.${timestamp}.${body}`).toBase64()}`;
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
export function buildDeliveryHeaders(input: HeaderInput): Record<string, string> {
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
    headers["X-Webhook-Signature"] = signatureHeader(input.secret, input.body);
    headers["webhook-signature"] = standardSignature(input.secret, input.eventId, input.timestamp, input.body);
  }
  return headers;
}
