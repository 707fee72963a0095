/**
 * `deno task listen --forward-to <url>`: follows the account's event stream
 * and POSTs each event to a local URL with the same body and headers as a real
 * delivery (both signature schemes), signed with a local secret printed at
 * start, so that a receiver built with `verifyWebhookSignature` or
 * `parseWebhookEvent` works unchanged on a laptop or a CI runner with no
 * public HTTPS address (Stripe's `stripe listen --forward-to`). It signs by
 * the service's rules: `X-Webhook-Signature` keyed with the UTF-8 bytes of
 * the whole secret as printed, `whsec_` included; the Standard Webhooks
 * signature with the decoded bytes of a `whsec_<base64>` secret. `--secret`
 * takes any webhook secret (16 to 256 characters), so a receiver's real
 * secret can be used as it is.
 *
 *   deno task listen --forward-to http://localhost:3000/hooks [--events message.received]
 *     [--api-key isk_...  | INBOX_API_KEY] [--base-url URL | INBOX_BASE_URL] [--secret SECRET]
 *
 * One line per event: `time type eventId -> status ms`. A dropped stream is
 * resumed with Last-Event-ID (nothing lost); Ctrl-C exits 0.
 */
import { parseArgs } from "node:util";
import { createClient, type Event, type EventType } from "../client/mod.ts";
import { buildDeliveryHeaders, importSigningKey, type SigningSecret } from "../deliveries/signer.ts";

/** What `listen` was asked to do. */
export interface ListenOptions {
  forwardTo: string;
  apiKey: string;
  baseUrl: string;
  /**
   * The signing secret, `whsec_<base64>` unless `--secret` gave another: the
   * key of `X-Webhook-Signature` is its UTF-8 bytes as it is, that of the
   * Standard Webhooks signature as those libraries read it (`importSigningKey`).
   */
  secret: string;
  events: EventType[] | undefined;
}

const USAGE = "Usage: deno task listen --forward-to <url> [--events type,...] [--api-key isk_...] " +
  "[--base-url http://localhost:8000] [--secret whsec_...|any 16 to 256 characters]";

/** Reads the flags and environment; throws an Error whose message says what is missing. */
export function readOptions(args: string[], env: (name: string) => string | undefined): ListenOptions {
  const { values } = parseArgs({
    args,
    options: {
      "forward-to": { type: "string" },
      "api-key": { type: "string" },
      "base-url": { type: "string" },
      "secret": { type: "string" },
      "events": { type: "string" },
    },
    strict: true,
  });
  const forwardTo = values["forward-to"];
  if (!forwardTo || !/^https?:\/\//.test(forwardTo)) throw new Error(`--forward-to needs an http(s) URL. ${USAGE}`);
  const apiKey = values["api-key"] ?? env("INBOX_API_KEY");
  if (!apiKey) throw new Error(`An API key is needed: --api-key isk_... or INBOX_API_KEY. ${USAGE}`);
  const secret = values.secret ?? newSecret();
  // The webhook secret rule (spec 8), so that any secret a webhook may have can be tried here.
  if (secret.length < 16 || secret.length > 256) throw new Error("--secret must be 16 to 256 characters");
  const events = values.events?.split(",").map((t) => t.trim()).filter((t) => t !== "") as EventType[] | undefined;
  return {
    forwardTo,
    apiKey,
    baseUrl: values["base-url"] ?? env("INBOX_BASE_URL") ?? "http://localhost:8000",
    secret,
    events: events && events.length > 0 ? events : undefined,
  };
}

/** A new local secret: `whsec_` + base64 of 24 random bytes. */
export function newSecret(): string {
  return `whsec_${crypto.getRandomValues(new Uint8Array(24)).toBase64()}`;
}

/** Forwards one event as a real delivery would send it; returns the status (0 when the URL did not answer). */
export async function forward(
  event: Event,
  to: string,
  key: SigningSecret,
): Promise<{ status: number; ms: number; error?: string }> {
  const body = JSON.stringify(event);
  const headers = buildDeliveryHeaders({
    serviceName: "InboxService",
    webhookId: "listen",
    eventId: event.id,
    eventType: event.type,
    deliveryId: `dlv_listen_${crypto.randomUUID().replaceAll("-", "")}`,
    timestamp: Math.floor(Date.now() / 1000),
    body,
    secret: key,
  });
  const started = performance.now();
  try {
    const res = await fetch(to, { method: "POST", headers, body, signal: AbortSignal.timeout(10_000) });
    await res.body?.cancel();
    return { status: res.status, ms: Math.round(performance.now() - started) };
  } catch (err) {
    // fetch says only "fetch failed"; its cause says why (connection refused, a TLS error).
    const cause = err instanceof Error && err.cause !== undefined ? `: ${String(err.cause)}` : "";
    return { status: 0, ms: Math.round(performance.now() - started), error: `${String(err)}${cause}` };
  }
}

/** Follows the stream and forwards every event until `signal` aborts. */
export async function listen(
  options: ListenOptions,
  signal: AbortSignal,
  print: (line: string) => void,
): Promise<void> {
  // The body is the envelope exactly as the stream gave it; serialised again, it is byte for byte the same JSON.
  const key = importSigningKey(options.secret);
  const client = createClient({ baseUrl: options.baseUrl, apiKey: options.apiKey });
  print(`Ready. Forwarding events to ${options.forwardTo}`);
  print(`Your webhook signing secret is ${options.secret}`);
  for await (const event of client.events.stream({ ...(options.events ? { types: options.events } : {}), signal })) {
    const result = await forward(event, options.forwardTo, key);
    const outcome = result.status === 0 ? `failed: ${result.error}` : String(result.status);
    print(`${new Date().toISOString()} ${event.type} ${event.id} -> ${outcome} ${result.ms}ms`);
  }
}

if (import.meta.main) {
  let options: ListenOptions;
  try {
    options = readOptions(Deno.args, (name) => Deno.env.get(name));
  } catch (err) {
    console.error(err instanceof Error ? err.message : String(err));
    Deno.exit(2);
  }
  const stop = new AbortController();
  const quit = () => stop.abort();
  Deno.addSignalListener("SIGINT", quit);
  Deno.addSignalListener("SIGTERM", quit);
  try {
    await listen(options, stop.signal, (line) => console.log(line));
  } catch (err) {
    if (!stop.signal.aborted) {
      console.error(`listen stopped: ${err instanceof Error ? err.message : String(err)}`);
      Deno.exit(1);
    }
  }
  Deno.exit(0);
}
