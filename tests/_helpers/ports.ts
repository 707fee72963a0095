/** Loopback ports for tests. */

/** A port on 127.0.0.1 nothing listens on right now: free to listen on, and refusing connections. */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}
