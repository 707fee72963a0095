/**
 * A TCP proxy on loopback in front of another address (PostgreSQL in the
 * outage tests): `cut()` closes its listener and every open connection, as a
 * server going down would, so new connections are refused; `restore()` listens
 * on the same port again. `startingUp()` answers every new connection as a
 * PostgreSQL server that is still starting does (error 57P03, then close),
 * counting them, so a test can see a client trying.
 */

/** A running proxy. */
export interface TcpProxy {
  port: number;
  /** Closes the listener and every proxied connection: connections are now refused. */
  cut(): void;
  /** Answers every new connection "the database system is starting up" (counted in `turnedAway`). */
  startingUp(): void;
  /** Connections turned away in `startingUp()` mode so far. */
  readonly turnedAway: number;
  /** Listens again on the same port, and forwards again. */
  restore(): void;
  close(): void;
}

/** PostgreSQL's ErrorResponse for 57P03 cannot_connect_now, as a starting server sends it. */
function startingUpError(): Uint8Array {
  const fields = ["SFATAL", "VFATAL", "C57P03", "Mthe database system is starting up"].map((f) => f + "\0").join("") +
    "\0";
  const body = new TextEncoder().encode(fields);
  const out = new Uint8Array(5 + body.length);
  out[0] = "E".charCodeAt(0);
  new DataView(out.buffer).setInt32(1, 4 + body.length);
  out.set(body, 5);
  return out;
}

/** Reads the client's startup message, answers 57P03, closes. */
async function turnAway(client: Deno.Conn): Promise<void> {
  try {
    await client.read(new Uint8Array(1024));
    await client.write(startingUpError());
  } catch {
    // The client left first.
  } finally {
    client.close();
  }
}

/** Proxies 127.0.0.1:<port> to `target` (a free port is chosen). */
export function startTcpProxy(target: { hostname: string; port: number }): TcpProxy {
  const open = new Set<Deno.Conn>();
  let listener: Deno.Listener | undefined;
  let starting = false;
  let turnedAway = 0;

  const pipe = async (from: Deno.Conn, to: Deno.Conn) => {
    try {
      await from.readable.pipeTo(to.writable);
    } catch {
      // The other side closed, or the proxy was cut.
    } finally {
      for (const c of [from, to]) {
        if (open.delete(c)) {
          try {
            c.close();
          } catch {
            // Already closed.
          }
        }
      }
    }
  };

  const accept = async (l: Deno.Listener) => {
    for await (const client of l) {
      if (starting) {
        turnedAway++;
        turnAway(client);
        continue;
      }
      let upstream: Deno.Conn;
      try {
        upstream = await Deno.connect(target);
      } catch {
        client.close();
        continue;
      }
      open.add(client);
      open.add(upstream);
      pipe(client, upstream);
      pipe(upstream, client);
    }
  };

  const listen = (port: number) => {
    listener = Deno.listen({ hostname: "127.0.0.1", port });
    accept(listener).catch(() => {});
    return (listener.addr as Deno.NetAddr).port;
  };

  const port = listen(0);
  const cut = () => {
    try {
      listener?.close();
    } catch {
      // Already closed.
    }
    listener = undefined;
    for (const c of [...open]) {
      open.delete(c);
      try {
        c.close();
      } catch {
        // Already closed.
      }
    }
  };
  return {
    port,
    cut,
    startingUp: () => {
      starting = true;
      for (const c of [...open]) {
        open.delete(c);
        c.close();
      }
      if (!listener) listen(port);
    },
    get turnedAway() {
      return turnedAway;
    },
    restore: () => {
      starting = false;
      if (!listener) listen(port);
    },
    close: cut,
  };
}
