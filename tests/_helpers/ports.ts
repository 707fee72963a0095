/** Loopback ports for tests. */

/**
 * Ports this process handed out lately. The kernel may give the same
 * ephemeral port to two binds in a row once the first listener is closed, so
 * two calls in a row (a service's PORT and SMTP_PORT) could get one port:
 * seen once in CI as "SMTP_PORT: must differ from PORT".
 */
const recent: number[] = [];
const RECENT = 256;

/** A port on 127.0.0.1 nothing listens on right now (free to listen on, and refusing connections), and none of the last ports this process handed out. */
export function freePort(): number {
  for (;;) {
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (listener.addr as Deno.NetAddr).port;
    listener.close();
    if (recent.includes(port)) continue;
    recent.push(port);
    if (recent.length > RECENT) recent.shift();
    return port;
  }
}
