/**
 * The egress proxy spoken to directly, as a SOCKS5 client would: the
 * credential, the address checks before any connection, handshakes that are
 * dropped, and close(). A plain TCP listener stands for the receiver and
 * counts the connections it gets, so "connects nowhere" is observed, not
 * assumed.
 */
import assert from "node:assert/strict";
import { type EgressProxy, Reply, startEgressProxy } from "../../src/deliveries/egress_proxy.ts";
import { staticResolver } from "../_helpers/resolver.ts";

/** A TCP server on 127.0.0.1 that counts connections and echoes what it reads. */
function startEchoServer(): { port: number; readonly accepted: number; close(): Promise<void> } {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns = new Set<Deno.Conn>();
  let accepted = 0;
  const serving = (async () => {
    const echoes: Promise<void>[] = [];
    try {
      for await (const conn of listener) {
        accepted++;
        conns.add(conn);
        echoes.push((async () => {
          const buf = new Uint8Array(1024);
          try {
            for (let n = await conn.read(buf); n !== null; n = await conn.read(buf)) {
              await conn.write(buf.subarray(0, n));
            }
          } catch {
            // Closed by close().
          } finally {
            if (conns.delete(conn)) conn.close();
          }
        })());
      }
    } catch {
      // The listener was closed.
    }
    await Promise.all(echoes);
  })();
  return {
    port: listener.addr.port,
    get accepted() {
      return accepted;
    },
    async close() {
      listener.close();
      for (const conn of conns) conn.close();
      conns.clear();
      await serving;
    },
  };
}

async function readExactly(conn: Deno.Conn, n: number): Promise<number[]> {
  const buf = new Uint8Array(n);
  let got = 0;
  while (got < n) {
    const r = await conn.read(buf.subarray(got));
    if (r === null) throw new Error(`closed after ${got} of ${n} bytes`);
    got += r;
  }
  return [...buf];
}

/** Whether the proxy has closed `conn`: its next read ends (or fails) within `ms`. */
async function closedWithin(conn: Deno.Conn, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"open">((resolve) => timer = setTimeout(() => resolve("open"), ms));
  const read = conn.read(new Uint8Array(16)).then((n) => (n === null ? "closed" : "data"), () => "closed");
  const outcome = await Promise.race([read, timeout]);
  clearTimeout(timer);
  if (outcome === "open") {
    closeQuietly(conn);
    await read;
  }
  return outcome === "closed";
}

function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch {
    // Already closed.
  }
}

const encoder = new TextEncoder();

/** A domain-name CONNECT request for `host:port`. */
function connectRequest(host: string, port: number): Uint8Array {
  const name = encoder.encode(host);
  return new Uint8Array([5, 1, 0, 3, name.length, ...name, port >> 8, port & 0xff]);
}

/** Greets and authenticates with `password` (the proxy's own by default); returns the auth status byte. */
async function authenticate(conn: Deno.Conn, proxy: EgressProxy, password = proxy.basicAuth.password) {
  await conn.write(new Uint8Array([5, 2, 0, 2]));
  assert.deepEqual(await readExactly(conn, 2), [5, 2], "username and password chosen");
  const user = encoder.encode(proxy.basicAuth.username);
  const pass = encoder.encode(password);
  await conn.write(new Uint8Array([1, user.length, ...user, pass.length, ...pass]));
  return (await readExactly(conn, 2))[1];
}

/** Asks for a tunnel to `host:port` with the right credential; returns the reply code. */
async function requestTunnel(conn: Deno.Conn, proxy: EgressProxy, host: string, port: number): Promise<number> {
  assert.equal(await authenticate(conn, proxy), 0);
  await conn.write(connectRequest(host, port));
  return (await readExactly(conn, 10))[1]!;
}

/** An echo server as `target.test` (127.0.0.1, on the trusted list), and a proxy that lets tunnels reach it. */
function proxyToTrustedTarget(): { target: ReturnType<typeof startEchoServer>; proxy: EgressProxy } {
  const target = startEchoServer();
  const proxy = startEgressProxy({
    resolver: staticResolver({ "target.test": ["127.0.0.1"] }),
    trustedHosts: new Set(["target.test"]),
  });
  return { target, proxy };
}

const connectToProxy = (proxy: EgressProxy) =>
  Deno.connect({ hostname: "127.0.0.1", port: Number(new URL(proxy.url).port) });

Deno.test("a name that now resolves to 127.0.0.1 is refused without connecting; on the trusted list it is tunnelled", async () => {
  const target = startEchoServer();
  const resolver = staticResolver({ "rebind.test": ["127.0.0.1"] });
  const strict = startEgressProxy({ resolver, trustedHosts: new Set() });
  const trusting = startEgressProxy({ resolver, trustedHosts: new Set(["rebind.test"]) });
  try {
    const refused = await connectToProxy(strict);
    assert.equal(await requestTunnel(refused, strict, "rebind.test", target.port), Reply.notAllowed);
    closeQuietly(refused);
    assert.equal(
      strict.refusal(`rebind.test:${target.port}`),
      "Unsafe address refused: Host rebind.test resolves to an unsafe address: loopback address 127.0.0.1",
    );
    assert.equal(target.accepted, 0, "nothing was connected");

    const allowed = await connectToProxy(trusting);
    assert.equal(await requestTunnel(allowed, trusting, "rebind.test", target.port), Reply.succeeded);
    await allowed.write(encoder.encode("ping"));
    assert.deepEqual(await readExactly(allowed, 4), [...encoder.encode("ping")], "bytes go both ways");
    assert.equal(target.accepted, 1);
    closeQuietly(allowed);
  } finally {
    await strict.close();
    await trusting.close();
    await target.close();
  }
});

Deno.test("an IP literal is checked as the address it is; a name that does not resolve is a DNS refusal", async () => {
  const proxy = startEgressProxy({ resolver: staticResolver({}), trustedHosts: new Set() });
  try {
    for (
      const [request, authority, code, reason] of [
        [
          new Uint8Array([5, 1, 0, 1, 10, 0, 0, 1, 1, 187]),
          "10.0.0.1:443",
          Reply.notAllowed,
          "Unsafe address refused: Unsafe host: private address 10.0.0.1",
        ],
        [
          new Uint8Array([5, 1, 0, 4, ...new Array(15).fill(0), 1, 1, 187]),
          "[::1]:443",
          Reply.notAllowed,
          "Unsafe address refused: Unsafe host: loopback address ::1",
        ],
        [
          connectRequest("nx.example.org", 443),
          "nx.example.org:443",
          Reply.hostUnreachable,
          "Could not resolve host: nx.example.org",
        ],
      ] as const
    ) {
      const conn = await connectToProxy(proxy);
      assert.equal(await authenticate(conn, proxy), 0);
      await conn.write(request);
      assert.equal((await readExactly(conn, 10))[1], code, authority);
      assert.equal(proxy.refusal(authority), reason);
      closeQuietly(conn);
    }
  } finally {
    await proxy.close();
  }
});

Deno.test("without the credential, or with a wrong one, the handshake fails and nothing is connected", async () => {
  const { target, proxy } = proxyToTrustedTarget();
  try {
    const anonymous = await connectToProxy(proxy);
    await anonymous.write(new Uint8Array([5, 1, 0])); // "no authentication" only
    assert.deepEqual(await readExactly(anonymous, 2), [5, 0xff], "no acceptable method");
    await anonymous.write(connectRequest("target.test", target.port)).catch(() => 0);
    assert.ok(await closedWithin(anonymous, 2_000), "then closed");
    closeQuietly(anonymous);

    const wrong = await connectToProxy(proxy);
    assert.equal(await authenticate(wrong, proxy, `${proxy.basicAuth.password.slice(0, -1)}x`), 1, "refused");
    await wrong.write(connectRequest("target.test", target.port)).catch(() => 0);
    assert.ok(await closedWithin(wrong, 2_000), "then closed");
    closeQuietly(wrong);
    assert.equal(target.accepted, 0, "nothing was connected");

    // The same request with the credential does reach the target.
    const right = await connectToProxy(proxy);
    assert.equal(await requestTunnel(right, proxy, "target.test", target.port), Reply.succeeded);
    closeQuietly(right);
    assert.equal(target.accepted, 1);
  } finally {
    await proxy.close();
    await target.close();
  }
});

Deno.test("a handshake that is not SOCKS5, or that is too slow, is dropped", async () => {
  const proxy = startEgressProxy({ resolver: staticResolver({}), trustedHosts: new Set() }, {
    handshakeTimeoutMs: 300,
  });
  try {
    // An HTTP client at the SOCKS port (the first byte is not version 5).
    const http = await connectToProxy(proxy);
    await http.write(encoder.encode("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"));
    assert.ok(await closedWithin(http, 2_000), "an HTTP request is dropped");
    closeQuietly(http);

    // A greeting, then silence; then a client that authenticates but never sends its request.
    const silent = await connectToProxy(proxy);
    await silent.write(new Uint8Array([5]));
    const started = performance.now();
    assert.ok(await closedWithin(silent, 2_000), "a silent client is dropped");
    assert.ok(performance.now() - started >= 200, "not before the handshake timeout");
    closeQuietly(silent);
    const stalled = await connectToProxy(proxy);
    assert.equal(await authenticate(stalled, proxy), 0);
    assert.ok(await closedWithin(stalled, 2_000), "a client that stops after authenticating is dropped");
    closeQuietly(stalled);
  } finally {
    await proxy.close();
  }
});

Deno.test("close() stops listening and closes open tunnels and pending handshakes", async () => {
  const { target, proxy } = proxyToTrustedTarget();
  const tunnel = await connectToProxy(proxy);
  const pending = await connectToProxy(proxy);
  try {
    assert.equal(await requestTunnel(tunnel, proxy, "target.test", target.port), Reply.succeeded);
    await pending.write(new Uint8Array([5, 1]));
    assert.equal(proxy.openTunnels, 1);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const closing = await Promise.race([
      proxy.close().then(() => "closed"),
      new Promise((resolve) => timer = setTimeout(() => resolve("still open after 2 s"), 2_000)),
    ]);
    clearTimeout(timer);
    assert.equal(closing, "closed");
    assert.equal(proxy.openTunnels, 0);
    assert.ok(await closedWithin(tunnel, 1_000), "the tunnel is closed");
    assert.ok(await closedWithin(pending, 1_000), "the pending handshake is closed");
    await assert.rejects(connectToProxy(proxy), Deno.errors.ConnectionRefused, "nothing listens any more");
    // Deno's resource and op sanitizers check the rest: nothing of the proxy is left open or pending.
  } finally {
    closeQuietly(tunnel);
    closeQuietly(pending);
    await proxy.close();
    await target.close();
  }
});
