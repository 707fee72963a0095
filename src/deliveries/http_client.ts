/**
 * The one HTTP client that talks to webhook receivers: `fetch` through the
 * in-process egress proxy (egress_proxy.ts), which resolves the name, checks
 * every address with the registration rules and connects only to a checked
 * one. TLS runs inside the tunnel, so `fetch` still verifies the certificate
 * against the name: a DNS answer that changed since registration (rebinding)
 * cannot aim a delivery at an internal address. `fetch` never connects to a
 * receiver itself.
 */
import { startEgressProxy } from "./egress_proxy.ts";
import type { UrlCheckOptions } from "../url_safety/check_url.ts";

/** What to send. */
export interface OutgoingRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  /** Aborts the send (the attempt's lease was lost); the abort's reason becomes the failure's. */
  signal?: AbortSignal;
}

/** What came back: a response (any status), or why there was none. */
export type SendOutcome =
  | {
    kind: "response";
    status: number;
    /** The first `maxBodyChars` characters of the body. */
    body: string;
    /** The `Retry-After` header, when the receiver sent one (read by the verdict). */
    retryAfter: string | undefined;
    durationMs: number;
  }
  | { kind: "error"; reason: string; durationMs: number };

/** A client with its address rules and trusted CAs. */
export interface WebhookHttpClient {
  send(req: OutgoingRequest, maxBodyChars?: number): Promise<SendOutcome>;
  /** Closes the pooled connections and the proxy, its tunnels included; later calls wait for the first. */
  close(): Promise<void>;
}

/** Variables that make Deno's fetch skip even an explicit proxy for the hosts they list (`*`: all). */
const NO_PROXY_VARIABLES = ["NO_PROXY", "no_proxy"];

/**
 * Deno reads NO_PROXY when the client is created and then connects straight
 * to any host it lists, explicit proxy or not: that would bypass every
 * address check. The client is created with the variables unset, and they are
 * put back at once for the rest of the process. A test fails when Deno stops
 * doing so (then this can go: docs/workarounds.md).
 */
function withoutNoProxy<T>(create: () => T): T {
  const saved = NO_PROXY_VARIABLES.map((name) => [name, Deno.env.get(name)] as const);
  for (const [name] of saved) Deno.env.delete(name);
  try {
    return create();
  } finally {
    for (const [name, value] of saved) if (value !== undefined) Deno.env.set(name, value);
  }
}

/**
 * The innermost message of a fetch failure, without its "error sending request for url (...)" wrapping.
 * Deno's wording, not an API: tests/deliveries/http_client_test.ts reads it for every refusal the proxy sends.
 */
export function innerMessage(err: unknown): string {
  let e = err as { message?: string; cause?: unknown } | undefined;
  while (e?.cause !== undefined && e.cause !== null) e = e.cause as typeof e;
  const message = e?.message ?? String(err);
  return message.replace(/^error sending request for url \([^)]*\): /, "").replace(/^client error \([^)]*\): /, "");
}

/** Why a fetch that did not get an answer failed, in the words of the delivery log. */
function describeFailure(message: string): string {
  if (/connection reset/i.test(message)) return "Connection reset by the receiver";
  if (/certificate|tls|ssl|handshake/i.test(message)) return `TLS error: ${message}`;
  return `Network error: ${message}`;
}

/**
 * What `fetch` says when the proxy refuses a tunnel: the text of the SOCKS reply code (tokio-socks, inside
 * Deno). Not an API either: a Deno whose wording differs fails tests/deliveries/http_client_test.ts.
 */
export const REFUSED_TUNNEL: ReadonlySet<string> = new Set([
  "General SOCKS server failure",
  "Connection not allowed by ruleset",
  "Network unreachable",
  "Host unreachable",
  "Connection refused",
  "Command not supported",
  "Address type not supported",
]);

/** The `host:port` a tunnel to `url` asks for, as the proxy records its refusals. */
function authorityOf(url: URL): string {
  return `${url.hostname}:${url.port || "443"}`;
}

/** Bodies up to this size, of known length and not compressed, are read whole. */
const WHOLE_BODY_BYTES = 64 * 1024;

/**
 * The body of a response, or when it is long or of unknown length, its start
 * (at least `maxChars` characters): the rest is not read, and the connection
 * is dropped instead.
 */
async function readPrefix(res: Response, maxChars: number): Promise<string> {
  if (res.body === null) return "";
  const length = Number(res.headers.get("content-length") ?? Infinity);
  const encoding = res.headers.get("content-encoding");
  if (length <= WHOLE_BODY_BYTES && (encoding === null || encoding === "identity")) {
    // The common case, a short answer: text() reads it natively, where a
    // stream reader costs about a third of a delivery's CPU time.
    try {
      return await res.text();
    } catch {
      return ""; // The receiver broke off the body.
    }
  }
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  try {
    while (text.length < maxChars) {
      const { done, value } = await reader.read();
      if (done) return text + decoder.decode();
      text += decoder.decode(value, { stream: true });
    }
    await reader.cancel();
  } catch {
    // The receiver broke off the body: what came is kept.
  }
  return text;
}

/** Builds the client and its proxy; `extraCaPem` adds CAs to the default roots (WEBHOOK_CA_CERTS). */
export function createWebhookHttpClient(urlCheck: UrlCheckOptions, extraCaPem?: string): WebhookHttpClient {
  const proxy = startEgressProxy(urlCheck);
  // HTTP/1.1 only, as receivers expect; keep-alive reuses a tunnel, which
  // stays connected to the address that was checked when it opened.
  const client = withoutNoProxy(() =>
    Deno.createHttpClient({
      proxy: { url: proxy.url, basicAuth: proxy.basicAuth },
      ...(extraCaPem ? { caCerts: [extraCaPem] } : {}),
      http2: false,
    })
  );

  let closed: Promise<void> | undefined;
  return {
    // Once only: the runtime may be stopped again (a test stopping an instance its harness closes too).
    close: () =>
      closed ??= (() => {
        client.close();
        return proxy.close();
      })(),
    async send(req, maxBodyChars = 500): Promise<SendOutcome> {
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      let url: URL;
      try {
        url = new URL(req.url);
      } catch {
        return { kind: "error", reason: "Invalid URL", durationMs: 0 };
      }
      if (url.protocol !== "https:") return { kind: "error", reason: "URL is not HTTPS", durationMs: 0 };
      const timedOut = (): SendOutcome => ({
        kind: "error",
        // Stopped from outside (the lease was lost): that reason, not a timeout.
        reason: req.signal?.aborted
          ? (req.signal.reason as Error | undefined)?.message ?? "Stopped"
          : `Timed out after ${req.timeoutMs} ms`,
        durationMs: elapsed(),
      });
      // The timeout covers the whole exchange, the body included.
      const abort = new AbortController();
      const timer = setTimeout(() => abort.abort(), req.timeoutMs);
      const stop = () => abort.abort();
      if (req.signal?.aborted) stop();
      req.signal?.addEventListener("abort", stop, { once: true });
      try {
        let res: Response;
        try {
          res = await fetch(url, {
            method: "POST",
            headers: req.headers,
            body: req.body,
            client,
            redirect: "manual",
            signal: abort.signal,
          });
        } catch (err) {
          if (abort.signal.aborted) return timedOut();
          const message = innerMessage(err);
          // fetch gives only the reply code of a refused tunnel; the proxy kept why.
          const reason = REFUSED_TUNNEL.has(message)
            ? proxy.refusal(authorityOf(url)) ?? `Network error: ${message}`
            : describeFailure(message);
          return { kind: "error", reason, durationMs: elapsed() };
        }
        const body = await readPrefix(res, maxBodyChars);
        if (abort.signal.aborted) return timedOut();
        return {
          kind: "response",
          status: res.status,
          body: body.slice(0, maxBodyChars),
          retryAfter: res.headers.get("retry-after") ?? undefined,
          durationMs: elapsed(),
        };
      } finally {
        clearTimeout(timer);
        req.signal?.removeEventListener("abort", stop);
      }
    },
  };
}
