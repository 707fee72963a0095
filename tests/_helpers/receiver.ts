/**
 * A real HTTPS webhook receiver for tests: `Deno.serve` with TLS on
 * 127.0.0.1 and a random port, using the CA-signed certificate of
 * `certs/receiver.pem` (valid for `localhost`, so `url()` uses that name).
 *
 * It records every request and answers with a configurable reply. To let the
 * delivery client reach it, start the app with
 * `env: { WEBHOOK_TRUSTED_HOSTS: "localhost" }` and
 * `resolver: staticResolver({ localhost: ["127.0.0.1"] })`; `startApp`
 * already trusts the test CA.
 *
 * ```ts
 * const receiver = await startReceiver();
 * // register receiver.url("/hook") as a webhook, trigger an event, then:
 * const [req] = await receiver.waitFor(1);
 * receiver.respond({ status: 500 }); // later requests fail
 * await receiver.close();
 * ```
 */

/** One request as the receiver saw it. */
export interface ReceivedRequest {
  method: string;
  /** Path and query, e.g. `/hook?x=1`. */
  path: string;
  /** Header names lowercased. */
  headers: Record<string, string>;
  /** The raw body text, exactly as sent (what signatures cover). */
  body: string;
  receivedAt: Date;
}

/** How to answer a request. Defaults: 200, body `ok`, no delay. */
export interface ReceiverReply {
  status?: number;
  body?: string;
  headers?: Record<string, string>;
  /** Milliseconds to wait before answering (cut short by `close()`). */
  delayMs?: number;
}

/** A fixed reply, or one chosen per request (`index` counts from 0). */
export type ReceiverHandler = ReceiverReply | ((req: ReceivedRequest, index: number) => ReceiverReply);

/** A running receiver. */
export interface Receiver {
  /** Every request so far, in arrival order. */
  readonly requests: readonly ReceivedRequest[];
  port: number;
  /** `https://localhost:<port><path>`. */
  url(path?: string): string;
  /** Replaces the reply for requests from now on. */
  respond(handler: ReceiverHandler): void;
  /** Resolves with the first `n` requests once that many arrived; rejects after `timeoutMs` (default 5000). */
  waitFor(n: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  /** Stops the server (pending delayed replies are answered at once). */
  close(): Promise<void>;
}

const certs = new URL("./certs/", import.meta.url);
const CERT = await Deno.readTextFile(new URL("receiver.pem", certs));
const KEY = await Deno.readTextFile(new URL("receiver.key", certs));

/** Starts a receiver answering with `handler` (default: 200 `ok`). */
export function startReceiver(opts: { handler?: ReceiverHandler } = {}): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  let handler: ReceiverHandler = opts.handler ?? {};
  const waiters = new Set<() => void>();
  const delays = new Map<ReturnType<typeof setTimeout>, () => void>();

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        delays.delete(timer);
        resolve();
      }, ms);
      delays.set(timer, resolve);
    });

  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, cert: CERT, key: KEY, onListen: () => {} },
    async (req) => {
      const url = new URL(req.url);
      const received: ReceivedRequest = {
        method: req.method,
        path: url.pathname + url.search,
        headers: Object.fromEntries([...req.headers].map(([k, v]) => [k.toLowerCase(), v])),
        body: await req.text(),
        receivedAt: new Date(),
      };
      const index = requests.push(received) - 1;
      for (const wake of waiters) wake();
      const reply = typeof handler === "function" ? handler(received, index) : handler;
      if (reply.delayMs) await sleep(reply.delayMs);
      const status = reply.status ?? 200;
      // 204, 205 and 304 answers cannot carry a body.
      const body = [204, 205, 304].includes(status) ? null : reply.body ?? "ok";
      return new Response(body, { status, headers: reply.headers ?? {} });
    },
  );
  const port = server.addr.port;

  return Promise.resolve({
    requests,
    port,
    url: (path = "/") => `https://localhost:${port}${path}`,
    respond: (next) => {
      handler = next;
    },
    waitFor: (n, timeoutMs = 5000) => {
      if (requests.length >= n) return Promise.resolve(requests.slice(0, n));
      return new Promise((resolve, reject) => {
        const check = () => {
          if (requests.length < n) return;
          done();
          resolve(requests.slice(0, n));
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`receiver got ${requests.length} of ${n} requests within ${timeoutMs} ms`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
      });
    },
    close: async () => {
      for (const [timer, resolve] of delays) {
        clearTimeout(timer);
        resolve();
      }
      delays.clear();
      await server.shutdown();
    },
  });
}

/** Key of a (webhook, event) pair as a receiver sees it. */
export function pairKey(webhookId: string, eventId: string): string {
  return `${webhookId} ${eventId}`;
}

/** (webhook, event) pairs the receiver has seen (since `since`, ms since the epoch), with how often. */
export function pairs(receiver: Receiver, since = 0): Map<string, number> {
  const seen = new Map<string, number>();
  for (const r of receiver.requests) {
    if (r.receivedAt.getTime() < since) continue;
    const key = pairKey(r.headers["x-webhook-id"] ?? "?", JSON.parse(r.body).id);
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  return seen;
}
