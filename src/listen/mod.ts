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
 * It prints the signing secret at start, and its ready line only once the
 * stream is open. Then one line per event: `time type eventId -> status ms`.
 * While the service cannot be reached it says so on stderr, one line per try
 * with the URL and the cause, and keeps trying (1 s, then longer, up to 5 s
 * between tries) until Ctrl-C. A dropped stream is resumed with
 * Last-Event-ID (nothing lost). Ctrl-C exits 0; a refused API key (401) exits
 * 1 with a line naming --api-key and INBOX_API_KEY (never the key).
 */
import { parseArgs } from "node:util";
import {
  createClient,
  type Event,
  InboxServiceError,
  type LogEventType,
  type StreamOpen,
  type StreamRetry,
} from "../client/mod.ts";
import {
  buildDeliveryHeaders,
  importSigningKey,
  newWebhookSecret as newSecret,
  type SigningSecret,
} from "../deliveries/signer.ts";

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
  events: LogEventType[] | undefined;
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
  const events = values.events?.split(",").map((t) => t.trim()).filter((t) => t !== "") as LogEventType[] | undefined;
  return {
    forwardTo,
    apiKey,
    baseUrl: values["base-url"] ?? env("INBOX_BASE_URL") ?? "http://localhost:8000",
    secret,
    events: events && events.length > 0 ? events : undefined,
  };
}

/** A new local secret: `whsec_` + base64 of 24 random bytes, as a rotation makes one. */
export { newSecret };

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
    secrets: [key],
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

/** The texts of an error and of its causes, outermost first (fetch says "fetch failed"; its cause says why). */
function messages(err: unknown): string[] {
  const out: string[] = [];
  for (let e = err, depth = 0; e !== undefined && e !== null && depth < 5; depth++) {
    out.push(e instanceof Error ? e.message : String(e));
    e = e instanceof Error ? e.cause : undefined;
  }
  return out;
}

/** A short cause of a failed or dropped connection to the service: "connection refused", "host not found". */
export function connectionCause(err: unknown): string {
  if (err instanceof InboxServiceError) return err.message;
  const text = messages(err).join(": ");
  if (/connection refused/i.test(text)) return "connection refused";
  if (/dns error|failed to lookup|name or service not known|no address associated/i.test(text)) {
    return "host not found";
  }
  if (/connection reset/i.test(text)) return "connection reset";
  if (/timed out|no answer within/i.test(text)) return `timed out (${messages(err).at(-1)})`;
  if (/certificate|tls|ssl|handshake/i.test(text)) return `TLS error (${messages(err).at(-1)})`;
  if (/error reading a body|connection closed|unexpected eof/i.test(text)) return "connection lost";
  return messages(err).at(-1) ?? "unknown error";
}

/** The line for a retry of the stream. */
export function retryLine(retry: StreamRetry): string {
  const wait = `${Math.round(retry.delayMs / 100) / 10} s`;
  return retry.dropped
    ? `The event stream ${retry.url} was cut (${connectionCause(retry.error)}); reconnecting in ${wait}, ` +
      "resuming after the last event received"
    : `Cannot reach ${retry.url} (${connectionCause(retry.error)}); trying again in ${wait} (Ctrl-C to stop)`;
}

/** The last line of a `listen` that stops by itself: why, and for a refused key which flag to fix. */
export function stoppedLine(err: unknown): string {
  if (err instanceof InboxServiceError && err.status === 401) {
    // The hint says which check the key failed; neither holds the key.
    const why = err.body?.hint ?? "401 UNAUTHORIZED";
    return `The service refused the API key: ${why}. Pass a valid key with --api-key isk_... or INBOX_API_KEY`;
  }
  return `listen stopped: ${err instanceof Error ? err.message : String(err)}`;
}

/** Where `listen` writes: `print` for the ready line and the events (stdout), `warn` for the connection's troubles (stderr). */
export interface ListenOutput {
  print: (line: string) => void;
  warn: (line: string) => void;
}

/**
 * Follows the stream and forwards every event until `signal` aborts; throws
 * InboxServiceError on a refused request (a 401 for a bad key).
 */
export async function listen(options: ListenOptions, signal: AbortSignal, out: ListenOutput): Promise<void> {
  // The body is the envelope exactly as the stream gave it; serialised again, it is byte for byte the same JSON.
  const key = importSigningKey(options.secret);
  const client = createClient({ baseUrl: options.baseUrl, apiKey: options.apiKey });
  out.print(`Your webhook signing secret is ${options.secret}`);
  let ready = false;
  const onOpen = (open: StreamOpen) => {
    if (!ready) out.print(`Ready. Forwarding events from ${options.baseUrl} to ${options.forwardTo}`);
    else out.warn(`Connected to ${open.url} again; forwarding resumes`);
    ready = true;
  };
  const onRetry = (retry: StreamRetry) => out.warn(retryLine(retry));
  const stream = client.events.stream({
    ...(options.events ? { types: options.events } : {}),
    signal,
    onOpen,
    onRetry,
  });
  for await (const event of stream) {
    const result = await forward(event, options.forwardTo, key);
    const outcome = result.status === 0 ? `failed: ${result.error}` : String(result.status);
    out.print(`${new Date().toISOString()} ${event.type} ${event.id} -> ${outcome} ${result.ms}ms`);
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
    await listen(options, stop.signal, { print: (line) => console.log(line), warn: (line) => console.error(line) });
  } catch (err) {
    if (!stop.signal.aborted) {
      console.error(stoppedLine(err));
      Deno.exit(1);
    }
  }
  Deno.exit(0);
}
