/** Configuration: defaults that work, and bad values named at start-up. */
import assert from "node:assert/strict";
import { ConfigError, loadConfig } from "../src/config.ts";

Deno.test("defaults need no environment at all", () => {
  const c = loadConfig({});
  assert.equal(c.port, 8000);
  assert.equal(c.databaseUrl, undefined);
  assert.equal(c.dataDir, "./data");
  assert.equal(c.serviceName, "InboxService");
  assert.equal(c.mailDomain, "inbox.localhost");
  assert.equal(c.smtpPort, 2525);
  assert.equal(c.cookieSecure, true);
  assert.equal(c.deliveryRetentionDays, 30);
  assert.equal(c.adminToken, undefined);
  assert.deepEqual([...c.webhookTrustedHosts], []);
});

Deno.test("values are parsed; empty strings count as unset", () => {
  const c = loadConfig({
    PORT: "9000",
    COOKIE_SECURE: "false",
    WEBHOOK_TRUSTED_HOSTS: " LocalHost, 127.0.0.1 ,,",
    ADMIN_TOKEN: "",
    SERVICE_NAME: "Acme",
  });
  assert.equal(c.port, 9000);
  assert.equal(c.cookieSecure, false);
  assert.deepEqual([...c.webhookTrustedHosts], ["localhost", "127.0.0.1"]);
  assert.equal(c.adminToken, undefined);
  assert.equal(c.serviceName, "Acme");
});

Deno.test("a bad value stops start-up with a message naming the variable", () => {
  const cases: Array<[Record<string, string>, string]> = [
    [{ PORT: "eighty" }, "PORT"],
    [{ PORT: "70000" }, "PORT"],
    [{ DATABASE_URL: "not a url" }, "DATABASE_URL"],
    [{ COOKIE_SECURE: "maybe" }, "COOKIE_SECURE"],
    [{ ADMIN_TOKEN: "short" }, "ADMIN_TOKEN"],
    [{ LOG_LEVEL: "loud" }, "LOG_LEVEL"],
    [{ SERVICE_NAME: "has space" }, "SERVICE_NAME"],
    [{ DELIVERY_RETENTION_DAYS: "0" }, "DELIVERY_RETENTION_DAYS"],
  ];
  for (const [env, name] of cases) {
    assert.throws(() => loadConfig(env), (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.match(err.message, new RegExp(`\\b${name}\\b`));
      return true;
    });
  }
});
