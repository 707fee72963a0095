/**
 * The one place that decides where a webhook connection goes: an in-process
 * SOCKS5 proxy on 127.0.0.1 (Stripe smokescreen's model). The delivery
 * client's `fetch` reaches receivers only through it (`socks5h`: the name, not
 * an address, comes here). For each tunnel it resolves the name, checks every
 * address with the registration rules, connects only to the first checked
 * one, then pumps bytes both ways. TLS runs end to end inside the tunnel, so
 * `fetch` still verifies the certificate against the name: a DNS answer that
 * changed since registration (rebinding) cannot aim a delivery at an internal
 * address.
 *
 * Any local process can reach a loopback port, so a tunnel needs the
 * process's random credential (RFC 1929 username and password); without it
 * the handshake fails and nothing is connected. SOCKS5 rather than HTTP
 * CONNECT: Deno 2.9's fetch sends a CONNECT proxy's `Proxy-Authorization`
 * inside the tunnel too, to the receiver, while SOCKS5 credentials stay in
 * the handshake with the proxy.
 *
 * `fetch` reports a refused tunnel by the SOCKS reply code alone, so the
 * reason also stays here for the client to read back (`refusal`), keyed by
 * the requested `host:port`.
 *
 * Deno 2.9 has no API that pins a connection while TLS checks the name (its
 * `tcp` proxy transport sends https requests in plain text): why, and what
 * would let this proxy go, in docs/workarounds.md.
 */
import { resolveSafeAddresses, type UrlCheckOptions } from "../url_safety/check_url.ts";
import { randomToken, timingSafeEqualText } from "../shared/crypto.ts";
import { errorCode } from "../shared/error_code.ts";

/** How the proxy is tuned; the defaults suit the service, tests shorten them. */
export interface EgressProxyOptions {
  /** Time a client has for the whole SOCKS handshake, credential and target included (default 5 s). */
  handshakeTimeoutMs?: number;
  /** Longest wait for the receiver's TCP handshake (default 60 s, the longest delivery timeout). */
  connectTimeoutMs?: number;
}

/** A running proxy. */
export interface EgressProxy {
  /** `socks5h://127.0.0.1:<port>`. */
  url: string;
  /** The credential a client must present; for `Deno.createHttpClient` only, never logged. */
  basicAuth: { username: string; password: string };
  /** Why the latest refused tunnel to `authority` (`host:port`, the host as a URL's hostname) was refused. */
  refusal(authority: string): string | undefined;
  /** Tunnels open now. */
  readonly openTunnels: number;
  /** Stops listening, drops every tunnel and pending handshake, and waits until all of them are closed. */
  close(): Promise<void>;
}

/**
 * Largest handshake accepted: greeting (up to 257 bytes), credential (up to
 * 513) and request (up to 262). Deno's is about 60 bytes.
 */
const MAX_HANDSHAKE_BYTES = 1032;
/** Refusals remembered at once; a client reads its own right after the refusal. */
const MAX_REMEMBERED_REFUSALS = 1024;
/**
 * Per direction of a tunnel, reused for every read: one TLS record at most
 * (16 KiB of plaintext and its overhead), and an idle pooled tunnel holds two.
 */
const PUMP_BUFFER_BYTES = 17 * 1024;

/** SOCKS5 reply codes (RFC 1928, section 6). */
export const Reply = {
  succeeded: 0x00,
  generalFailure: 0x01,
  notAllowed: 0x02,
  networkUnreachable: 0x03,
  hostUnreachable: 0x04,
  connectionRefused: 0x05,
  commandNotSupported: 0x07,
  addressTypeNotSupported: 0x08,
} as const;

const USERNAME_PASSWORD = 0x02;
const NO_ACCEPTABLE_METHOD = 0xff;
const CONNECT = 0x01;

/** A refusal: the reply code `fetch` sees, and the reason as the delivery log states it. */
interface Refusal {
  code: number;
  reason: string;
}

/** Why a TCP connection to a receiver failed, in the words of the delivery log. */
function connectFailure(err: unknown): Refusal {
  switch (errorCode(err)) {
    case "ECONNREFUSED":
      return { code: Reply.connectionRefused, reason: "Connection refused" };
    case "ECONNRESET":
      return { code: Reply.generalFailure, reason: "Connection reset by the receiver" };
    case "EHOSTUNREACH":
      return { code: Reply.hostUnreachable, reason: "Receiver unreachable" };
    case "ENETUNREACH":
      return { code: Reply.networkUnreachable, reason: "Receiver unreachable" };
  }
  return { code: Reply.generalFailure, reason: `Network error: ${(err as Error | undefined)?.message ?? String(err)}` };
}

/** Closes a connection or the listener, which may already be closed. */
function closeQuietly(closable: { close(): void }): void {
  try {
    closable.close();
  } catch {
    // Already closed.
  }
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let written = 0;
  while (written < bytes.byteLength) written += await conn.write(bytes.subarray(written));
}

/** Reads a handshake in pieces of known size, all within one bounded buffer. */
class HandshakeReader {
  readonly #conn: Deno.Conn;
  readonly #buf = new Uint8Array(MAX_HANDSHAKE_BYTES);
  #length = 0;
  #at = 0;

  constructor(conn: Deno.Conn) {
    this.#conn = conn;
  }

  /** The next `n` bytes; throws when the client ends first or the handshake outgrows the buffer. */
  async take(n: number): Promise<Uint8Array> {
    while (this.#length - this.#at < n) {
      if (this.#length === this.#buf.length) throw new Error("Handshake too large");
      const got = await this.#conn.read(this.#buf.subarray(this.#length));
      if (got === null) throw new Error("Handshake cut short");
      this.#length += got;
    }
    const bytes = this.#buf.subarray(this.#at, this.#at + n);
    this.#at += n;
    return bytes;
  }

  async byte(): Promise<number> {
    return (await this.take(1))[0]!;
  }

  /** Bytes the client sent after the handshake (kept for the tunnel). */
  rest(): Uint8Array {
    return this.#buf.slice(this.#at, this.#length);
  }
}

/** The requested host, as a URL's hostname would spell it (IPv6 in brackets), and port. */
async function readTarget(reader: HandshakeReader): Promise<{ hostname: string; port: number } | number> {
  const [version, command, , addressType] = await reader.take(4);
  if (version !== 5) throw new Error("Not SOCKS5");
  let hostname: string;
  switch (addressType) {
    case 0x01:
      hostname = [...await reader.take(4)].join(".");
      break;
    case 0x03: {
      const name = new TextDecoder().decode(await reader.take(await reader.byte()));
      // Whatever else a name holds is left to resolveSafeAddresses, as the
      // URL's hostname was before; whitespace, ":" and brackets never are.
      if (!/^[^\s:[\]/@]+$/.test(name)) return Reply.addressTypeNotSupported;
      hostname = name.toLowerCase();
      break;
    }
    case 0x04: {
      const bytes = await reader.take(16);
      const groups = Array.from({ length: 8 }, (_, i) => ((bytes[2 * i]! << 8) | bytes[2 * i + 1]!).toString(16));
      // The URL parser gives the canonical (compressed) form the trusted hosts are written in.
      hostname = new URL(`https://[${groups.join(":")}]/`).hostname;
      break;
    }
    default:
      return Reply.addressTypeNotSupported;
  }
  const portBytes = await reader.take(2);
  if (command !== CONNECT) return Reply.commandNotSupported;
  return { hostname, port: (portBytes[0]! << 8) | portBytes[1]! };
}

/** Starts the proxy on 127.0.0.1 and a free port. */
export function startEgressProxy(urlCheck: UrlCheckOptions, opts: EgressProxyOptions = {}): EgressProxy {
  const handshakeTimeoutMs = opts.handshakeTimeoutMs ?? 5_000;
  const connectTimeoutMs = opts.connectTimeoutMs ?? 60_000;
  const basicAuth = { username: "egress", password: randomToken(32) };
  const expectedCredential = `${basicAuth.username}:${basicAuth.password}`;
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  /** Every connection not yet closed, client and receiver sides alike. */
  const conns = new Set<Deno.Conn>();
  /** Every client connection's handling, awaited by close(). */
  const tasks = new Set<Promise<void>>();
  const refusals = new Map<string, string>();
  const closing = new AbortController();
  let tunnels = 0;

  const remember = (authority: string, reason: string) => {
    // Re-inserted so that the map's order is the refusals' order; the oldest go first.
    refusals.delete(authority);
    refusals.set(authority, reason);
    if (refusals.size > MAX_REMEMBERED_REFUSALS) refusals.delete(refusals.keys().next().value!);
  };

  const reply = (conn: Deno.Conn, code: number) =>
    // The bound address is not used by fetch: 0.0.0.0:0.
    writeAll(conn, new Uint8Array([5, code, 0, 0x01, 0, 0, 0, 0, 0, 0]));

  /** The handshake: the requested target once the credential is right, or undefined when refused or dropped. */
  const handshake = async (
    client: Deno.Conn,
  ): Promise<{ hostname: string; port: number; rest: Uint8Array } | undefined> => {
    const reader = new HandshakeReader(client);
    const [version, count] = await reader.take(2);
    if (version !== 5) return undefined;
    const methods = await reader.take(count!);
    if (!methods.includes(USERNAME_PASSWORD)) {
      await writeAll(client, new Uint8Array([5, NO_ACCEPTABLE_METHOD]));
      return undefined;
    }
    await writeAll(client, new Uint8Array([5, USERNAME_PASSWORD]));
    if (await reader.byte() !== 1) return undefined;
    const decoder = new TextDecoder();
    const username = decoder.decode(await reader.take(await reader.byte()));
    const password = decoder.decode(await reader.take(await reader.byte()));
    if (!timingSafeEqualText(`${username}:${password}`, expectedCredential)) {
      await writeAll(client, new Uint8Array([1, 1]));
      return undefined;
    }
    await writeAll(client, new Uint8Array([1, 0]));
    const target = await readTarget(reader);
    if (typeof target === "number") {
      await reply(client, target);
      return undefined;
    }
    return { ...target, rest: reader.rest() };
  };

  /** The checks of one tunnel: a connection to a checked address, or why not. */
  const open = async (
    target: { hostname: string; port: number },
    signal: AbortSignal,
  ): Promise<{ ok: true; upstream: Deno.TcpConn } | { ok: false; refusal: Refusal }> => {
    const safe = await resolveSafeAddresses(target.hostname, urlCheck);
    if (!safe.ok) {
      // A name that does not resolve is a DNS failure (typo, expired domain), not an SSRF refusal.
      return safe.kind === "dns"
        ? { ok: false, refusal: { code: Reply.hostUnreachable, reason: safe.reason } }
        : { ok: false, refusal: { code: Reply.notAllowed, reason: `Unsafe address refused: ${safe.reason}` } };
    }
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), connectTimeoutMs);
    try {
      const upstream = await Deno.connect({
        hostname: safe.addresses[0]!,
        port: target.port,
        signal: AbortSignal.any([signal, timeout.signal]),
      });
      return { ok: true, upstream };
    } catch (err) {
      return {
        ok: false,
        refusal: timeout.signal.aborted
          ? { code: Reply.hostUnreachable, reason: `Connect timed out after ${connectTimeoutMs} ms` }
          : connectFailure(err),
      };
    } finally {
      clearTimeout(timer);
    }
  };

  const handle = async (client: Deno.TcpConn) => {
    // A slow or silent client is dropped: closing the connection ends the pending read.
    const timer = setTimeout(() => closeQuietly(client), handshakeTimeoutMs);
    let target;
    try {
      target = await handshake(client);
    } catch {
      return; // Too large, cut short, or dropped by the timer.
    } finally {
      clearTimeout(timer);
    }
    if (!target) return;
    // The client leaving (the delivery timed out) abandons the connect.
    const left = new AbortController();
    const firstRead = watchForLeaving(client, left);
    try {
      const opened = await open(target, AbortSignal.any([left.signal, closing.signal]));
      if (!opened.ok) {
        remember(`${target.hostname}:${target.port}`, opened.refusal.reason);
        await reply(client, opened.refusal.code);
        return;
      }
      await tunnel(client, opened.upstream, target.rest, firstRead);
    } finally {
      // Ends the watch's read if it is still waiting, so nothing outlives the task.
      closeQuietly(client);
      await firstRead;
    }
  };

  const tunnel = async (
    client: Deno.TcpConn,
    upstream: Deno.TcpConn,
    rest: Uint8Array,
    firstRead: Promise<Chunk | null>,
  ) => {
    conns.add(upstream);
    tunnels++;
    // One side failing (a reset, close()) ends the other side too.
    const fail = () => {
      closeQuietly(client);
      closeQuietly(upstream);
    };
    try {
      if (closing.signal.aborted) return;
      client.setNoDelay(true);
      upstream.setNoDelay(true);
      await reply(client, Reply.succeeded);
      await Promise.all([
        firstRead.then(async (first) => {
          // The watch's read is the first read of the client's direction.
          if (first === null) return await upstream.closeWrite();
          await writeAll(upstream, rest);
          await pump(client, upstream, first);
        }).catch(fail),
        pump(upstream, client, { buf: new Uint8Array(PUMP_BUFFER_BYTES), n: 0 }).catch(fail),
      ]);
    } catch {
      // The client left before the reply.
    } finally {
      tunnels--;
      conns.delete(upstream);
      closeQuietly(upstream);
    }
  };

  const accept = async () => {
    try {
      for await (const conn of listener) {
        conns.add(conn);
        const task = handle(conn).catch(() => {}).finally(() => {
          conns.delete(conn);
          closeQuietly(conn);
          tasks.delete(task);
        });
        tasks.add(task);
      }
    } catch {
      // The listener was closed.
    }
  };
  const accepting = accept();

  return {
    url: `socks5h://127.0.0.1:${port}`,
    basicAuth,
    refusal: (authority) => refusals.get(authority),
    get openTunnels() {
      return tunnels;
    },
    async close() {
      closing.abort();
      closeQuietly(listener);
      for (const conn of conns) closeQuietly(conn);
      await accepting;
      await Promise.all([...tasks]);
    },
  };
}

/** Bytes read into a buffer that the next reads reuse. */
interface Chunk {
  buf: Uint8Array;
  n: number;
}

/**
 * Reads the client side while the receiver is being connected: its end (or an
 * error) means it left, and aborts `left`. Bytes a client sends before the
 * reply are kept for the tunnel, in the buffer its direction goes on with.
 */
function watchForLeaving(client: Deno.Conn, left: AbortController): Promise<Chunk | null> {
  const buf = new Uint8Array(PUMP_BUFFER_BYTES);
  return client.read(buf).then((n) => n, () => null).then((n) => {
    if (n === null) {
      left.abort();
      return null;
    }
    return { buf, n };
  });
}

/**
 * Copies `from` to `to` until `from` ends, then half-closes `to`, so each
 * direction ends on its own (a receiver may answer after the request is sent).
 * `first` holds bytes already read from `from`, in the buffer every later read
 * reuses: streams (pipeTo) cost about 40 % of the throughput here.
 */
async function pump(from: Deno.Conn, to: Deno.Conn, first: Chunk): Promise<void> {
  const { buf } = first;
  let n: number | null = first.n;
  while (n !== null) {
    if (n > 0) await writeAll(to, buf.subarray(0, n));
    n = await from.read(buf);
  }
  await to.closeWrite();
}
