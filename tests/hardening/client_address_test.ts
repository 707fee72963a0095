/**
 * The client address that per-address throttles count: the connection's,
 * `X-Forwarded-For` only from a configured proxy, IPv6 by /64, and one
 * "unknown" bucket when there is no connection (in-process `app.request()`).
 */
import assert from "node:assert/strict";
import { Hono } from "hono";
import { clientAddressReader, UNKNOWN_ADDRESS } from "../../src/http/client_address.ts";
import { loadConfig } from "../../src/config.ts";
import { ConfigError } from "../../src/shared/config_error.ts";

/** Serves an app answering the client address it reads, on `hostname`; returns a fetcher. */
function serve(hostname: string, trusted: string[]) {
  const read = clientAddressReader(trusted);
  const app = new Hono().get("/", (c) => c.text(read(c)));
  const server = Deno.serve({ hostname, port: 0, onListen: () => {} }, app.fetch);
  const host = hostname.includes(":") ? `[${hostname}]` : hostname;
  return {
    app,
    get: async (xff?: string) =>
      await (await fetch(`http://${host}:${server.addr.port}/`, {
        headers: xff === undefined ? {} : { "x-forwarded-for": xff },
      })).text(),
    close: () => server.shutdown(),
  };
}

Deno.test("the connection's address, whatever X-Forwarded-For says, unless the connection is a trusted proxy", async () => {
  const direct = serve("127.0.0.1", []);
  try {
    assert.equal(await direct.get(), "127.0.0.1");
    assert.equal(await direct.get("203.0.113.9"), "127.0.0.1");
    // In process there is no connection: one shared bucket.
    assert.equal(
      await (await direct.app.request("/", { headers: { "x-forwarded-for": "203.0.113.9" } })).text(),
      UNKNOWN_ADDRESS,
    );
  } finally {
    await direct.close();
  }

  const proxied = serve("127.0.0.1", ["127.0.0.0/8", "10.0.0.0/8"]);
  try {
    assert.equal(await proxied.get(), "127.0.0.1", "no header: the proxy itself");
    assert.equal(await proxied.get("203.0.113.9"), "203.0.113.9");
    // The nearest untrusted hop: entries further left were written by the client and may be forged.
    assert.equal(await proxied.get("192.0.2.1, 203.0.113.9, 10.1.2.3"), "203.0.113.9");
    assert.equal(await proxied.get("10.9.9.9, 10.1.2.3"), "10.9.9.9", "only proxies: the farthest one");
    assert.equal(await proxied.get("203.0.113.9, not-an-address"), "127.0.0.1", "garbage stops the walk");
    assert.equal(await proxied.get("::ffff:203.0.113.9"), "203.0.113.9", "IPv4-mapped IPv6 is the IPv4 client");
    assert.equal(await proxied.get("2001:db8:1:2:aaaa::1"), "2001:db8:1:2::/64");
  } finally {
    await proxied.close();
  }
});

/** Whether this host can listen on the IPv6 loopback (containers often have IPv6 off). */
function ipv6Loopback(): boolean {
  try {
    Deno.listen({ hostname: "::1", port: 0 }).close();
    return true;
  } catch {
    return false;
  }
}

Deno.test({ name: "IPv6 clients are counted per /64", ignore: !ipv6Loopback() }, async () => {
  const v6 = serve("::1", []);
  try {
    assert.equal(await v6.get(), "0:0:0:0::/64");
  } finally {
    await v6.close();
  }
});

Deno.test("throttle settings: working defaults, checked values", () => {
  const d = loadConfig({});
  assert.equal(d.loginEmailMaxFailures, 10);
  assert.equal(d.loginAddressMaxFailures, 100);
  assert.equal(d.loginFailureWindowSeconds, 900);
  assert.equal(d.loginLockoutSeconds, 300);
  assert.equal(d.loginLockoutMaxSeconds, 3600);
  assert.equal(d.registrationsPerAddressPerHour, 20);
  assert.deepEqual([...d.trustedProxies], []);

  const c = loadConfig({ TRUSTED_PROXIES: " 10.0.0.0/8, 192.0.2.7 ,fd00::/8" });
  assert.deepEqual([...c.trustedProxies], ["10.0.0.0/8", "192.0.2.7", "fd00::/8"]);
  assert.throws(() => loadConfig({ TRUSTED_PROXIES: "10.0.0.0/8,proxy.internal" }), ConfigError);
  // Failures older than an hour are swept, so no window may be longer.
  assert.throws(() => loadConfig({ LOGIN_FAILURE_WINDOW_SECONDS: "3601" }), /LOGIN_FAILURE_WINDOW_SECONDS/);
  assert.throws(() => loadConfig({ LOGIN_EMAIL_MAX_FAILURES: "0" }), /LOGIN_EMAIL_MAX_FAILURES/);
});
