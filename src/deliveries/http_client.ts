/**
 * The one HTTP client that talks to webhook receivers. It resolves the name
 * itself, checks every address with the registration rules, and connects only
 * to a checked address (node:https's `lookup` hook), while TLS still verifies
 * the certificate against the name: a DNS answer that changed since
 * registration (rebinding) cannot aim a delivery at an internal address.
 */
import https from "node:https";
import tls from "node:tls";
import type { LookupFunction } from "node:net";
import { resolveSafeAddresses, type UrlCheckOptions } from "../url_safety/check_url.ts";
import { errorCode } from "../shared/error_code.ts";

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
  close(): void;
}

function describeError(err: unknown): string {
  const e = err as { message?: string } | null | undefined;
  const code = errorCode(err);
  switch (code) {
    case "ECONNREFUSED":
      return "Connection refused";
    case "ECONNRESET":
      return "Connection reset by the receiver";
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return "Receiver unreachable";
    case "CERT_HAS_EXPIRED":
    case "DEPTH_ZERO_SELF_SIGNED_CERT":
    case "SELF_SIGNED_CERT_IN_CHAIN":
    case "UNABLE_TO_VERIFY_LEAF_SIGNATURE":
    case "UNABLE_TO_GET_ISSUER_CERT_LOCALLY":
    case "ERR_TLS_CERT_ALTNAME_INVALID":
      return `TLS error: ${e?.message ?? code}`;
  }
  const message = e?.message ?? String(err);
  if (/certificate|tls|ssl|handshake/i.test(message)) return `TLS error: ${message}`;
  return `Network error: ${message}`;
}

/**
 * An agent whose pool key is host, port and server name only. Node's key also
 * folds in the `ca` option, which with the system roots plus WEBHOOK_CA_CERTS
 * is some 200 KB of PEM concatenated on every request (a sixth of the CPU time
 * of a delivery in a profile). Every request of this agent has the same CA
 * list, so leaving it out of the key changes nothing else.
 */
class PooledAgent extends https.Agent {
  override getName(options: { host?: string; port?: number | string; servername?: string }): string {
    return `${options.host ?? ""}:${options.port ?? ""}:${options.servername ?? ""}`;
  }
}

/** Builds the client; `extraCaPem` adds CAs to the system roots (WEBHOOK_CA_CERTS). */
export function createWebhookHttpClient(urlCheck: UrlCheckOptions, extraCaPem?: string): WebhookHttpClient {
  const ca = extraCaPem ? [...tls.rootCertificates, extraCaPem] : undefined;
  // Keep-alive: a receiver getting many deliveries reuses its connection. A
  // reused socket is still connected to the address that was checked.
  const agent = new PooledAgent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 256, ...(ca ? { ca } : {}) });

  return {
    close: () => agent.destroy(),
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
      const hostname = url.hostname.replace(/^\[|\]$/g, "");
      const safe = await resolveSafeAddresses(url.hostname, urlCheck);
      if (!safe.ok) {
        // A name that does not resolve is a DNS failure (typo, expired domain), not an SSRF refusal.
        const reason = safe.kind === "dns" ? safe.reason : `Unsafe address refused: ${safe.reason}`;
        return { kind: "error", reason, durationMs: elapsed() };
      }
      const address = safe.addresses[0]!;
      const family = address.includes(":") ? 6 : 4;
      const lookup: LookupFunction = (_name, options, callback) => {
        // Whatever the socket asks, it gets the address that passed the check.
        if ((options as { all?: boolean }).all) {
          (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [{
            address,
            family,
          }]);
        } else {
          callback(null, address, family);
        }
      };

      return await new Promise<SendOutcome>((resolve) => {
        let settled = false;
        const finish = (outcome: SendOutcome) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve(outcome);
        };
        const request = https.request({
          protocol: "https:",
          hostname,
          port: url.port ? Number(url.port) : 443,
          path: url.pathname + url.search,
          method: "POST",
          headers: { ...req.headers, "Content-Length": String(new TextEncoder().encode(req.body).byteLength) },
          servername: /^[\d.]+$|:/.test(hostname) ? undefined : hostname,
          agent,
          lookup,
        }, (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => {
            if (text.length < maxBodyChars) text += chunk;
            else res.destroy(); // Enough of the body: do not read a large one.
          });
          const done = () =>
            finish({
              kind: "response",
              status: res.statusCode ?? 0,
              body: text.slice(0, maxBodyChars),
              retryAfter: res.headers["retry-after"] as string | undefined,
              durationMs: elapsed(),
            });
          res.on("end", done);
          res.on("close", done);
          res.on("error", done);
        });
        const timer = setTimeout(() => {
          request.destroy(new Error("timeout"));
          finish({ kind: "error", reason: `Timed out after ${req.timeoutMs} ms`, durationMs: elapsed() });
        }, req.timeoutMs);
        request.on("error", (err) => finish({ kind: "error", reason: describeError(err), durationMs: elapsed() }));
        const stopped = () => {
          request.destroy(new Error("stopped"));
          finish({ kind: "error", reason: (req.signal?.reason as Error)?.message ?? "Stopped", durationMs: elapsed() });
        };
        if (req.signal?.aborted) return stopped();
        req.signal?.addEventListener("abort", stopped, { once: true });
        request.end(req.body);
      });
    },
  };
}
