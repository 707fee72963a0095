/**
 * Receiver-side checks of Inbox Service deliveries: the `X-Webhook-Signature`
 * HMAC and, in `parseWebhookEvent`, the Standard Webhooks signature, replay
 * protection and the typed event. Each scheme keys the HMAC as its
 * independent verifiers do (GitHub-style code and Standard Webhooks
 * libraries), so a receiver may mix ours with theirs.
 * Pure (Web Crypto only, no I/O), so it runs in Deno, Node, Bun, browsers and
 * edge runtimes. `crypto.subtle.verify` compares in constant time.
 */
import type { components } from "../../generated/api.d.ts";

/** Any event the service delivers, discriminated by `type`. */
export type WebhookEvent = components["schemas"]["WebhookEvent"];
/** The `type` of a delivered event (`test` is sent only by the test endpoint). */
export type WebhookEventType = WebhookEvent["type"];

/** Why `parseWebhookEvent` refused a delivery. */
export type WebhookVerificationFailure =
  | "missing_signature"
  | "invalid_signature"
  | "malformed_event"
  | "stale_event"
  | "future_event";

/** Thrown by `parseWebhookEvent` for a delivery that must not be trusted; answer it with a 4xx. */
export class WebhookVerificationError extends Error {
  override name = "WebhookVerificationError";
  constructor(readonly reason: WebhookVerificationFailure, message: string) {
    super(message);
  }
}

/** Options of `parseWebhookEvent`. */
export interface ParseWebhookOptions {
  /** Largest accepted distance, in seconds, between the event's time and now (default 300). */
  toleranceSeconds?: number;
  /** The current time (default: the system clock). */
  now?: Date | number;
}

/** Headers as a `Headers` object or a plain record (Node's `req.headers` fits). */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

const SIGNATURE = /^sha256=([0-9a-f]{64})$/;
const STANDARD_SIGNATURE = /^v1,([A-Za-z0-9+/]+={0,2})$/;
const EVENT_TYPES: ReadonlySet<string> = new Set<WebhookEventType>([
  "message.received",
  "inbox.created",
  "inbox.expired",
  "test",
  // Never sent by a webhook; forwarded by `listen` from the event log.
  "webhook.disabled",
  "webhook.enabled",
]);
const encoder = new TextEncoder();

/** `whsec_`, then the standard base64 alphabet with `=` padding only at the end (whole groups of four: checked beside). */
const WHSEC_BASE64 = /^whsec_([A-Za-z0-9+/]+={0,2})$/;

/**
 * The Standard Webhooks HMAC key of a secret, read as their libraries read
 * it: the decoded bytes of a `whsec_<base64>` secret, otherwise the secret's
 * UTF-8 bytes (a `whsec_` prefix on something that is not well-formed base64
 * included). The service signs the `webhook-signature` with the same rule;
 * `X-Webhook-Signature` is always keyed with the secret's UTF-8 bytes.
 */
export function standardWebhooksKey(secret: string): Uint8Array<ArrayBuffer> {
  const base64 = WHSEC_BASE64.exec(secret)?.[1];
  // At least one group of four, so the key is never empty. atob, not Uint8Array.fromBase64: Node 20 lacks the latter.
  const decoded = base64 !== undefined && base64.length % 4 === 0 ? base64Bytes(base64) : null;
  return decoded ?? encoder.encode(secret);
}

type KeyRule = (secret: string) => Uint8Array<ArrayBuffer>;

/** X-Webhook-Signature (spec 6.2): the secret's UTF-8 bytes exactly as registered, whatever its form. */
const signatureKey: KeyRule = (secret) => encoder.encode(secret);

function hmacKey(secret: string, rule: KeyRule): Promise<CryptoKey> {
  if (typeof secret !== "string" || secret.length === 0) {
    throw new TypeError("The webhook secret must be a non-empty string");
  }
  return crypto.subtle.importKey("raw", rule(secret), { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
}

function hexBytes(hex: string): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

function base64Bytes(text: string): Uint8Array<ArrayBuffer> | null {
  try {
    const binary = atob(text);
    const out = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
    return out;
  } catch {
    return null;
  }
}

/**
 * A receiver's secrets: the webhook's secret, or during the overlap of a
 * rotation (`POST /api/user-webhooks/{id}/rotate-secret`) the new one and the
 * old one, in any order; a delivery is accepted when it verifies with one.
 */
export type WebhookSecrets = string | readonly string[];

/** The secrets as a list; an empty list or an empty secret is a configuration mistake (TypeError). */
function secretList(secrets: WebhookSecrets): readonly string[] {
  const list = typeof secrets === "string" ? [secrets] : secrets;
  if (!Array.isArray(list) || list.length === 0) throw new TypeError("At least one webhook secret is needed");
  return list;
}

/** The first of `secrets` that `X-Webhook-Signature` verifies with, if any. */
async function signingSecret(
  rawBody: string,
  signatureHeader: string | null | undefined,
  secrets: WebhookSecrets,
): Promise<string | undefined> {
  const keys = await Promise.all(secretList(secrets).map(async (s) => [s, await hmacKey(s, signatureKey)] as const));
  if (typeof rawBody !== "string" || typeof signatureHeader !== "string") return undefined;
  const match = SIGNATURE.exec(signatureHeader);
  if (!match) return undefined;
  for (const [secret, key] of keys) {
    if (await crypto.subtle.verify("HMAC", key, hexBytes(match[1]!), encoder.encode(rawBody))) return secret;
  }
  return undefined;
}

/**
 * Checks `X-Webhook-Signature` (`sha256=` + 64 lowercase hex digits of
 * HMAC-SHA256(secret, rawBody), keyed with the secret's UTF-8 bytes as given,
 * a `whsec_...` secret included) against the raw body as received, before any
 * JSON parsing, with the secret or with any of the secrets given (during the
 * overlap of a rotation the header is keyed with the new secret). False when
 * the header is missing, malformed or wrong. Throws a TypeError only for no
 * secret or an empty one (a configuration mistake).
 */
export async function verifyWebhookSignature(
  rawBody: string,
  signatureHeader: string | null | undefined,
  secret: WebhookSecrets,
): Promise<boolean> {
  return await signingSecret(rawBody, signatureHeader, secret) !== undefined;
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== name) continue;
    return Array.isArray(value) ? value[0] : value;
  }
  return undefined;
}

/**
 * The attempt time signed by the Standard Webhooks headers, in Unix seconds:
 * undefined when they are absent; an error when present but not valid. The
 * key is `standardWebhooksKey(secret)`, as a Standard Webhooks library reads it.
 */
async function signedAttemptTime(
  rawBody: string,
  headers: WebhookHeaders,
  secret: string,
): Promise<number | undefined> {
  const signature = header(headers, "webhook-signature");
  if (signature === undefined) return undefined;
  const id = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  const invalid = new WebhookVerificationError("invalid_signature", "Invalid webhook-signature header");
  if (id === undefined || timestamp === undefined || !/^\d{1,12}$/.test(timestamp)) throw invalid;
  const key = await hmacKey(secret, standardWebhooksKey);
  const message = encoder.encode(`${id}.${timestamp}.${rawBody}`);
  // The header may carry several space-separated signatures (key rotation); one valid one is enough.
  for (const part of signature.split(" ")) {
    const bytes = base64Bytes(STANDARD_SIGNATURE.exec(part)?.[1] ?? "");
    if (bytes && bytes.length === 32 && await crypto.subtle.verify("HMAC", key, bytes, message)) {
      return Number(timestamp);
    }
  }
  throw invalid;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function parseEvent(rawBody: string): WebhookEvent & { createdAt: string } {
  let value: unknown;
  try {
    value = JSON.parse(rawBody);
  } catch {
    throw new WebhookVerificationError("malformed_event", "The webhook body is not JSON");
  }
  if (
    !isObject(value) || typeof value.id !== "string" || typeof value.type !== "string" ||
    typeof value.createdAt !== "string" || !isObject(value.data)
  ) {
    throw new WebhookVerificationError(
      "malformed_event",
      "The webhook body is not an event {id, type, createdAt, data}",
    );
  }
  if (!EVENT_TYPES.has(value.type)) {
    throw new WebhookVerificationError("malformed_event", `Unknown webhook event type: ${value.type}`);
  }
  if (Number.isNaN(Date.parse(value.createdAt))) {
    throw new WebhookVerificationError("malformed_event", "The webhook event has an invalid createdAt");
  }
  return value as unknown as WebhookEvent;
}

/**
 * Verifies a delivery and returns its typed event. Throws a
 * `WebhookVerificationError` when the `X-Webhook-Signature` is missing or
 * invalid, the body is not an event, or the event is outside the tolerance
 * (replay protection). The time checked is the event's `createdAt`, unless the
 * delivery carries a valid Standard Webhooks signature: then it is the signed
 * `webhook-timestamp` of the attempt, so that retries and redeliveries of an
 * older event are still accepted while a captured request replayed later is not.
 * `secret` is the webhook's secret exactly as registered (or as `listen`
 * printed it), or during the overlap of a rotation the new and the old one;
 * each signature is checked with its own scheme's key, both with the secret
 * that `X-Webhook-Signature` verifies with.
 */
export async function parseWebhookEvent(
  rawBody: string,
  headers: WebhookHeaders,
  secret: WebhookSecrets,
  options: ParseWebhookOptions = {},
): Promise<WebhookEvent> {
  const toleranceSeconds = options.toleranceSeconds ?? 300;
  const signature = header(headers, "x-webhook-signature");
  if (signature === undefined || signature === "") {
    throw new WebhookVerificationError("missing_signature", "Missing X-Webhook-Signature header");
  }
  const signedWith = await signingSecret(rawBody, signature, secret);
  if (signedWith === undefined) {
    throw new WebhookVerificationError("invalid_signature", "Invalid X-Webhook-Signature");
  }
  const event = parseEvent(rawBody);
  const attemptSeconds = await signedAttemptTime(rawBody, headers, signedWith);
  const nowMs = options.now === undefined ? Date.now() : Number(options.now);
  const eventMs = attemptSeconds === undefined ? Date.parse(event.createdAt) : attemptSeconds * 1000;
  const what = attemptSeconds === undefined ? `createdAt ${event.createdAt}` : `webhook-timestamp ${attemptSeconds}`;
  const ageSeconds = (nowMs - eventMs) / 1000;
  if (ageSeconds > toleranceSeconds) {
    throw new WebhookVerificationError(
      "stale_event",
      `Webhook event is too old (${what} is ${Math.round(ageSeconds)} s ago; tolerance ${toleranceSeconds} s)`,
    );
  }
  if (-ageSeconds > toleranceSeconds) {
    throw new WebhookVerificationError(
      "future_event",
      `Webhook event is in the future (${what} is ${Math.round(-ageSeconds)} s ahead; tolerance ${toleranceSeconds} s)`,
    );
  }
  return event;
}
