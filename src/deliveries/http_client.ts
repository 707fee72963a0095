/**
 * The one HTTP client that talks to webhook receivers. For each new
 * connection it resolves the URL's name, checks every address with the
 * registration rules (`resolveSafeAddresses`), connects to the first checked
 * one, and runs TLS over that connection against the URL's name: a DNS answer
 * that changed since registration (rebinding) cannot aim a delivery at an
 * internal address, and the certificate must still name the host. Idle
 * connections are kept per host and reused (keep-alive); each stays connected
 * to the address that was checked when it opened.
 *
 * Deno's `fetch` cannot connect a name to an address the caller chose
 * (denoland/deno#8238), so this speaks HTTP/1.1 itself (`http1.ts`) over
 * `Deno.connect` and `Deno.startTls`. It replaced `fetch` through an
 * in-process SOCKS5 proxy that checked each tunnel: side by side, 32
 * concurrent POSTs to the bench receiver cost the client process 20 to 25 us
 * of CPU each this way, 43 to 63 with plain `fetch` and 77 to 97 through the
 * proxy (docs/workarounds.md).
 */
import { resolveSafeAddresses, type UrlCheckOptions } from "../url_safety/check_url.ts";
import { errorCode } from "../shared/error_code.ts";
import { framing, ProtocolError, requestBytes, ResponseReader } from "./http1.ts";

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
  /** Closes every connection, idle or in use; later calls wait for the first. */
  close(): Promise<void>;
}

const encoder = new TextEncoder();
/** Decodes whole bodies; a body cut off gets a streaming decoder of its own (it keeps state between calls). */
const decoder = new TextDecoder();

/** Bodies up to this size are read whole, and their connection kept; of a longer one only the start is read. */
const WHOLE_BODY_BYTES = 64 * 1024;
/**
 * An idle connection is closed after this long. Receivers close theirs
 * sooner or later (Node's HTTP server after 5 s): one reused after the
 * receiver closed it fails before any answer and is replaced (`send`).
 */
const IDLE_MS = 4_000;
/** Idle connections kept per host; more are closed. */
const MAX_IDLE_PER_HOST = 64;

/** Why a connection to a receiver could not be made, in the words of the delivery log. */
class Refused extends Error {}

/** Why a TCP connection to a receiver failed, in the words of the delivery log. */
function connectFailure(err: unknown): string {
  switch (errorCode(err)) {
    case "ECONNREFUSED":
      return "Connection refused";
    case "ECONNRESET":
      return "Connection reset by the receiver";
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return "Receiver unreachable";
  }
  return `Network error: ${(err as Error | undefined)?.message ?? String(err)}`;
}

/** Why an exchange on an open connection failed, in the words of the delivery log. */
function exchangeFailure(err: unknown): string {
  if (errorCode(err) === "ECONNRESET" || err instanceof Deno.errors.ConnectionReset) {
    return "Connection reset by the receiver";
  }
  const message = (err as Error | undefined)?.message ?? String(err);
  if (err instanceof ProtocolError) return `Network error: Invalid response: ${message}`;
  if (/certificate|tls|ssl|handshake/i.test(message)) return `TLS error: ${message}`;
  return `Network error: ${message}`;
}

/** An open connection to a receiver, and what it read past the last response. */
interface Connection {
  tls: Deno.TlsConn;
  reader: ResponseReader;
  /** When it went idle (performance.now()). */
  idleSince: number;
}

/** Closes a connection that may be closed already. */
function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch {
    // Already closed.
  }
}

/** Builds the client; `extraCaPem` adds CAs to the default roots (WEBHOOK_CA_CERTS). */
export function createWebhookHttpClient(urlCheck: UrlCheckOptions, extraCaPem?: string): WebhookHttpClient {
  const caCerts = extraCaPem ? [extraCaPem] : undefined;
  /** Idle connections per `host:port`, the most recently used last. */
  const idle = new Map<string, Connection[]>();
  /** Every connection open now, idle or in use (closed by close()). */
  const open = new Set<Deno.TlsConn>();
  let sweeper: ReturnType<typeof setInterval> | undefined;
  let closed: Promise<void> | undefined;

  const drop = (tls: Deno.TlsConn) => {
    open.delete(tls);
    closeQuietly(tls);
  };

  /** Closes the connections idle for IDLE_MS; stops when none is left. */
  const sweep = () => {
    const now = performance.now();
    for (const [key, list] of idle) {
      const fresh = list.filter((c) => now - c.idleSince < IDLE_MS);
      for (const c of list) if (!fresh.includes(c)) drop(c.tls);
      if (fresh.length > 0) idle.set(key, fresh);
      else idle.delete(key);
    }
    if (idle.size === 0 && sweeper !== undefined) {
      clearInterval(sweeper);
      sweeper = undefined;
    }
  };

  const release = (key: string, conn: Connection) => {
    if (closed) return drop(conn.tls);
    const list = idle.get(key) ?? [];
    if (list.length >= MAX_IDLE_PER_HOST) return drop(conn.tls);
    conn.idleSince = performance.now();
    list.push(conn);
    idle.set(key, list);
    if (sweeper === undefined) {
      const timer = setInterval(sweep, IDLE_MS / 2);
      // An idle connection never keeps the process alive.
      Deno.unrefTimer(timer);
      sweeper = timer;
    }
  };

  /** A reused idle connection (not idle too long), or undefined. */
  const reuse = (key: string): Connection | undefined => {
    const list = idle.get(key);
    const now = performance.now();
    while (list && list.length > 0) {
      const conn = list.pop()!;
      if (now - conn.idleSince < IDLE_MS) return conn;
      drop(conn.tls);
    }
    return undefined;
  };

  /** A new connection to a checked address of `url`'s host, TLS verified against the name. */
  const connect = async (url: URL, signal: AbortSignal): Promise<Connection> => {
    const safe = await resolveSafeAddresses(url.hostname, urlCheck);
    if (!safe.ok) {
      // A name that does not resolve is a DNS failure (typo, expired domain), not an SSRF refusal.
      throw new Refused(safe.kind === "dns" ? safe.reason : `Unsafe address refused: ${safe.reason}`);
    }
    signal.throwIfAborted();
    let tcp: Deno.TcpConn;
    try {
      tcp = await Deno.connect({ hostname: safe.addresses[0]!, port: Number(url.port || 443), signal });
    } catch (err) {
      throw signal.aborted ? err : new Refused(connectFailure(err));
    }
    if (closed) {
      closeQuietly(tcp);
      throw new Refused("Stopped");
    }
    tcp.setNoDelay(true);
    // The name as TLS checks it: an IPv6 literal without its brackets.
    const name = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
    const tls = await Deno.startTls(tcp, { hostname: name, ...(caCerts ? { caCerts } : {}) });
    open.add(tls);
    const stop = () => drop(tls);
    signal.addEventListener("abort", stop, { once: true });
    try {
      await tls.handshake();
    } catch (err) {
      drop(tls);
      throw signal.aborted ? err : new Refused(`TLS error: ${(err as Error).message}`);
    } finally {
      signal.removeEventListener("abort", stop);
    }
    return { tls, reader: new ResponseReader((into) => tls.read(into)), idleSince: 0 };
  };

  /** One request on `conn`: the response, and whether the connection may carry another. */
  const exchange = async (conn: Connection, bytes: Uint8Array, maxBodyChars: number) => {
    conn.reader.received = false;
    let written = 0;
    while (written < bytes.byteLength) written += await conn.tls.write(bytes.subarray(written));
    const head = await conn.reader.head();
    if (head === null) throw new Error("Connection closed before the response");
    const f = framing(head);
    // Enough bytes for maxBodyChars characters of UTF-8, and no less than a whole short body.
    const { bytes: body, complete } = await conn.reader.body(f, Math.max(WHOLE_BODY_BYTES, maxBodyChars * 4));
    const reusable = complete && f.kind !== "close" && !conn.reader.leftover &&
      !/(?:^|,)\s*close\s*(?:,|$)/i.test(head.headers.get("connection") ?? "");
    return {
      status: head.status,
      // A body cut off may end inside a character: that character is left out.
      body: (complete ? decoder.decode(body) : new TextDecoder().decode(body, { stream: true })).slice(0, maxBodyChars),
      retryAfter: head.headers.get("retry-after"),
      reusable,
    };
  };

  return {
    close: () =>
      closed ??= (() => {
        if (sweeper !== undefined) clearInterval(sweeper);
        sweeper = undefined;
        idle.clear();
        for (const tls of open) closeQuietly(tls);
        open.clear();
        return Promise.resolve();
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
      if (closed) return { kind: "error", reason: "Stopped", durationMs: 0 };
      let bytes: Uint8Array;
      try {
        bytes = requestBytes(
          url,
          { "Accept": "*/*", "Accept-Encoding": "identity", ...req.headers },
          encoder.encode(req.body),
        );
      } catch (err) {
        return { kind: "error", reason: `Invalid request: ${(err as Error).message}`, durationMs: 0 };
      }
      const timedOut = (): SendOutcome => ({
        kind: "error",
        // Stopped from outside (the lease was lost): that reason, not a timeout.
        reason: req.signal?.aborted
          ? (req.signal.reason as Error | undefined)?.message ?? "Stopped"
          : `Timed out after ${req.timeoutMs} ms`,
        durationMs: elapsed(),
      });
      if (req.signal?.aborted) return timedOut();
      // The timeout covers the whole exchange, connecting and the body included.
      const abort = new AbortController();
      const timer = setTimeout(() => abort.abort(), req.timeoutMs);
      const stop = () => abort.abort();
      req.signal?.addEventListener("abort", stop, { once: true });
      const key = `${url.hostname}:${url.port || 443}`;
      let conn: Connection | undefined;
      // Closing the connection in use ends its pending read or write.
      const cut = () => conn && drop(conn.tls);
      abort.signal.addEventListener("abort", cut, { once: true });
      try {
        // A reused connection that the receiver closed while it was idle fails
        // before any answer: the request goes once more, on a new connection.
        for (let fresh = false;; fresh = true) {
          conn = fresh ? undefined : reuse(key);
          const reused = conn !== undefined;
          conn ??= await connect(url, abort.signal);
          try {
            const answer = await exchange(conn, bytes, maxBodyChars);
            if (answer.reusable) release(key, conn);
            else drop(conn.tls);
            if (abort.signal.aborted) return timedOut();
            return {
              kind: "response",
              status: answer.status,
              body: answer.body,
              retryAfter: answer.retryAfter,
              durationMs: elapsed(),
            };
          } catch (err) {
            drop(conn.tls);
            if (abort.signal.aborted) return timedOut();
            if (closed) return { kind: "error", reason: "Stopped", durationMs: elapsed() };
            if (reused && !conn.reader.received) continue;
            return { kind: "error", reason: exchangeFailure(err), durationMs: elapsed() };
          }
        }
      } catch (err) {
        if (abort.signal.aborted) return timedOut();
        if (err instanceof Refused) return { kind: "error", reason: err.message, durationMs: elapsed() };
        return { kind: "error", reason: exchangeFailure(err), durationMs: elapsed() };
      } finally {
        clearTimeout(timer);
        req.signal?.removeEventListener("abort", stop);
        abort.signal.removeEventListener("abort", cut);
      }
    },
  };
}
