/**
 * The HTTP listener: Deno's own HTTP server (hyper, as behind `Deno.serve`),
 * plus the one thing `Deno.serve` lacks as of Deno 2.9: a deadline for a
 * request's headers. `Deno.serve` keeps a connection that never finishes its
 * headers open for as long as the client likes (measured: 500 such
 * connections all still open after 45 s), so a few thousand idle sockets
 * would exhaust the process's descriptors.
 *
 * Here the listener accepts connections itself and serves each with Deno's
 * per-connection server (`serveHttpOnConnection`, the sibling of the
 * `serveHttpOnListener` that `Deno.serve` runs: the same hyper server and
 * request path, given one connection). Every connection must present a
 * complete request head within `headersTimeoutMs` of being accepted and of
 * its last response being delivered (`info.completed`); otherwise it is shut
 * down (by one periodic sweep over the connections, at most a tenth of the
 * deadline or 1 s late). A request being handled or a response still streaming (a long poll,
 * an event stream) is never cut: the clock only runs while the connection
 * has nothing in flight. An idle keep-alive connection therefore closes after
 * the same time, as Node's `keepAliveTimeout` would close it.
 *
 * `serveHttpOnConnection` is reachable only through `Deno[Deno.internal]`: if
 * a Deno release drops it, the listener falls back to `Deno.serve` (no header
 * deadline) and says so in the log, rather than failing to start;
 * tests/hardening/header_timeout_test.ts fails on such a Deno. When to remove
 * it: docs/workarounds.md.
 */
import { getLogger } from "@logtape/logtape";
import { withoutContext } from "../shared/log.ts";

const log = getLogger(["inbox", "http"]);

/** The request handler, as `Deno.serve` calls it. */
export type Handler = (req: Request, info: Deno.ServeHandlerInfo<Deno.NetAddr>) => Response | Promise<Response>;

/** The deadline sweep's period as a share of the deadline, and its bounds (ms): 10 s closes within 10-11 s. */
const SWEEP_SHARE = 0.1;
const SWEEP_MIN_MS = 25;
const SWEEP_MAX_MS = 1_000;

/** Where and how to listen. */
export interface ServeOptions {
  hostname: string;
  port: number;
  /** Time a connection has to send a complete request head (0: no deadline, as Deno.serve). */
  headersTimeoutMs: number;
  onListen?: (addr: Deno.NetAddr) => void;
}

/** A running listener. */
export interface HttpServerHandle {
  addr: Deno.NetAddr;
  /** Whether request heads have a deadline (false only on the Deno.serve fallback or with a 0 timeout). */
  headersDeadline: boolean;
  /** Stops accepting, lets requests in flight finish, closes every connection. */
  shutdown(): Promise<void>;
}

/** The per-connection server `serveHttpOnConnection` returns (Deno's `HttpServer`). */
interface ConnectionServer {
  finished: Promise<void>;
  shutdown(): Promise<void>;
}

type ServeOnConnection = (
  conn: Deno.Conn,
  signal: AbortSignal | undefined,
  handler: Handler,
  onError: (error: unknown) => Response | Promise<Response>,
  onListen: (scheme: string) => void,
) => ConnectionServer;

/** Deno's per-connection server, if this Deno has it. */
function serveOnConnection(): ServeOnConnection | undefined {
  const internal = (Deno as unknown as Record<symbol | string, unknown>)[
    (Deno as unknown as { internal: symbol | string }).internal
  ] as Record<string, unknown> | undefined;
  const fn = internal?.serveHttpOnConnection;
  return typeof fn === "function" ? fn as ServeOnConnection : undefined;
}

/** What Deno.serve answers when a handler throws (ours never does: the app answers its own errors). */
function onError(error: unknown): Response {
  log.error("Unhandled error in the HTTP handler: {error}", {
    error: error instanceof Error ? error.stack ?? error.message : String(error),
  });
  return new Response("Internal Server Error", { status: 500 });
}

/** Serves `handler` on `hostname`:`port` (0 picks a free port). */
export function serveHttp(opts: ServeOptions, appHandler: Handler): HttpServerHandle {
  // Deno's server calls a handler from the runtime, in whatever async context
  // the JavaScript that ran just before left behind: after the first mail,
  // every access line carried that mail's `smtpSession`
  // (tests/service/log_context_process_test.ts). A request starts outside
  // every context, as a timer armed at start-up would.
  const handler: Handler = (req, info) => withoutContext(() => appHandler(req, info));
  const onConnection = serveOnConnection();
  if (!onConnection || opts.headersTimeoutMs <= 0) {
    if (!onConnection) {
      log.warn("This Deno has no per-connection HTTP server: request heads have no deadline (HTTP_HEADERS_TIMEOUT_MS)");
    }
    const server = Deno.serve({
      hostname: opts.hostname,
      port: opts.port,
      onListen: (addr) => opts.onListen?.(addr),
    }, handler);
    return { addr: server.addr, headersDeadline: false, shutdown: () => server.shutdown() };
  }

  const listener = Deno.listen({ hostname: opts.hostname, port: opts.port });
  const addr = listener.addr;
  /** Each connection's server, and since when it has had nothing in flight (-1 while it has). */
  const connections = new Map<ConnectionServer, { idleSince: number }>();
  let closing = false;

  // One sweep for all connections instead of a timer armed and cleared per
  // request: under wrk on GET /api/user-webhooks those timers were 1.7-2.0 %
  // of the service's profile samples (3 % of its busy time), the sweep and
  // the bookkeeping 0.3 % (tests/bench/api_profile.ts); a connection's
  // bookkeeping is now two field writes per request. A connection is shut
  // down on the first sweep after its deadline: between `headersTimeoutMs`
  // and `headersTimeoutMs` + SWEEP_SHARE of it (at most 1 s) after it went
  // idle, never before.
  const sweepEveryMs = Math.min(SWEEP_MAX_MS, Math.max(SWEEP_MIN_MS, Math.floor(opts.headersTimeoutMs * SWEEP_SHARE)));
  const sweep = setInterval(() => {
    const now = performance.now();
    for (const [server, state] of connections) {
      if (state.idleSince >= 0 && now - state.idleSince >= opts.headersTimeoutMs) {
        state.idleSince = -1;
        // Shutting the connection's server down closes an idle connection at once (partial head or none).
        server.shutdown().catch(() => {});
      }
    }
  }, sweepEveryMs);

  const serveConnection = (conn: Deno.Conn) => {
    let inFlight = 0;
    const state = { idleSince: performance.now() };
    const done = () => {
      if (--inFlight === 0 && !closing) state.idleSince = performance.now();
    };
    const wrapped: Handler = (req, info) => {
      // A complete head arrived: its request (and its response) has no deadline here.
      if (inFlight++ === 0) state.idleSince = -1;
      info.completed.then(done, done);
      return handler(req, info);
    };
    // Requests arrive asynchronously: none can reach `wrapped` before the connection is registered below.
    const server = onConnection(conn, undefined, wrapped, onError, () => {});
    connections.set(server, state);
    const forget = () => void connections.delete(server);
    server.finished.then(forget, forget);
  };

  const accepting = (async () => {
    while (!closing) {
      let conn: Deno.Conn;
      try {
        conn = await listener.accept();
      } catch (err) {
        if (closing || err instanceof Deno.errors.BadResource) return;
        // Out of descriptors and the like: wait a moment rather than spin.
        log.warn("Accepting an HTTP connection failed: {error}", { error: String(err) });
        await new Promise((r) => setTimeout(r, 50));
        continue;
      }
      if (closing) {
        conn.close();
        return;
      }
      serveConnection(conn);
    }
  })();

  opts.onListen?.(addr);
  return {
    addr,
    headersDeadline: true,
    async shutdown() {
      if (closing) return;
      closing = true;
      clearInterval(sweep);
      listener.close();
      await accepting;
      await Promise.all([...connections.keys()].map((c) => c.shutdown().catch(() => {})));
    },
  };
}
