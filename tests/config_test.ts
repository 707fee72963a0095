/** Configuration: defaults that work, and bad values named at start-up. */
import assert from "node:assert/strict";
import { configKey, EnvSchema, loadConfig } from "../src/config.ts";
import { ConfigError } from "../src/shared/config_error.ts";
import { configRows, configTable } from "../scripts/config_table.ts";

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

Deno.test("every other default, and the normalisation the schema does", () => {
  const d = loadConfig({});
  assert.equal(d.host, "0.0.0.0");
  assert.equal(d.databasePoolSize, 10);
  assert.equal(d.databaseConnectTimeoutMs, 30_000, "start-up keeps trying an unreachable database for 30 s");
  assert.equal(d.smtpMaxBytes, 10 * 1024 * 1024);
  assert.equal(d.webhookCaCerts, undefined);
  assert.equal(d.encryptionKey, undefined);
  assert.equal(d.deliveryTimeoutMs, 10_000);
  assert.equal(d.deliveryConcurrency, 64);
  assert.equal(d.sessionTtlDays, 30);
  assert.equal(d.maxBodyBytes, 64 * 1024);
  assert.equal(d.logLevel, "info");

  const key = "A".repeat(43) + "=";
  const c = loadConfig({ MAIL_DOMAIN: "Mail.Example.COM", ENCRYPTION_KEY: `  ${key}\n`, COOKIE_SECURE: "0" });
  assert.equal(c.mailDomain, "mail.example.com");
  assert.equal(c.encryptionKey, key);
  assert.equal(c.cookieSecure, false);
  assert.equal(loadConfig({ COOKIE_SECURE: "1" }).cookieSecure, true);
});

Deno.test("the configuration keeps the camelCase names the code uses, one per variable", () => {
  assert.deepEqual(Object.keys(loadConfig({})).sort(), [
    "adminToken",
    "cookieSecure",
    "dataDir",
    "databaseConnectTimeoutMs",
    "databasePoolSize",
    "databaseUrl",
    "deliveryConcurrency",
    "deliveryConcurrencyPerAccount",
    "deliveryRetentionDays",
    "deliveryTimeoutMs",
    "encryptionKey",
    "eventRetentionDays",
    "eventStreamKeepAliveMs",
    "eventStreamsPerAccount",
    "host",
    "httpHeadersTimeoutMs",
    "inboxesPerAccount",
    "logFormat",
    "logLevel",
    "loginAddressMaxFailures",
    "loginEmailMaxFailures",
    "loginFailureWindowSeconds",
    "loginLockoutMaxSeconds",
    "loginLockoutSeconds",
    "mailDomain",
    "maxBodyBytes",
    "messageWaitsPerAccount",
    "metricsToken",
    "port",
    "redeliveriesPerMinute",
    "registrationsPerAddressPerHour",
    "serviceName",
    "sessionTtlDays",
    "smtpAuth",
    "smtpGreetingDelayMs",
    "smtpMaxBytes",
    "smtpMaxConnections",
    "smtpMaxConnectionsPerAddress",
    "smtpPort",
    "smtpRequireTls",
    "smtpTlsCert",
    "smtpTlsKey",
    "smtpsPort",
    "trustedProxies",
    "webhookCaCerts",
    "webhookTestsPerMinute",
    "webhookTrustedHosts",
  ]);
  assert.deepEqual(Object.keys(loadConfig({})), Object.keys(EnvSchema.shape).map(configKey));
  assert.equal(configKey("WEBHOOK_CA_CERTS"), "webhookCaCerts");
  assert.equal(configKey("PORT"), "port");
});

Deno.test("hosts and domains: WEBHOOK_TRUSTED_HOSTS as URLs spell hosts, MAIL_DOMAIN and HOST checked", () => {
  assert.deepEqual([...loadConfig({ WEBHOOK_TRUSTED_HOSTS: "[::1], Bücher.example ,10.0.0.1" }).webhookTrustedHosts], [
    "[::1]",
    "xn--bcher-kva.example",
    "10.0.0.1",
  ]);
  for (const value of ["https://hooks.example.com", "localhost:8443", "::1", "hooks.example.com/path", "a b"]) {
    assert.throws(() => loadConfig({ WEBHOOK_TRUSTED_HOSTS: value }), /WEBHOOK_TRUSTED_HOSTS: must be/, value);
  }
  assert.equal(loadConfig({ MAIL_DOMAIN: "localhost" }).mailDomain, "localhost");
  for (const value of ["inbox@example.com", "-inbox.example", "a..b", "inbox example"]) {
    assert.throws(() => loadConfig({ MAIL_DOMAIN: value }), /MAIL_DOMAIN: must be a domain name/, value);
  }
  for (const value of ["127.0.0.1", "::", "localhost", "inbox-host.internal"]) {
    assert.equal(loadConfig({ HOST: value }).host, value);
  }
  for (const value of ["not a host", "::1::", "http://localhost"]) {
    assert.throws(() => loadConfig({ HOST: value }), /HOST: must be an IP address/, value);
  }
  assert.throws(
    () => loadConfig({ PORT: "7000", SMTP_PORT: "7000" }),
    /^ConfigError: Invalid configuration: SMTP_PORT: must differ from PORT \(both are 7000\)/,
  );
  assert.equal(loadConfig({ PORT: "0", SMTP_PORT: "0" }).smtpPort, 0, "two free ports, chosen at bind");
});

Deno.test("LOG_FORMAT is json or pretty in any letter case; unset it is left to the terminal test at start", () => {
  assert.equal(loadConfig({}).logFormat, undefined);
  assert.equal(loadConfig({ LOG_FORMAT: "JSON" }).logFormat, "json");
  assert.equal(loadConfig({ LOG_FORMAT: "Pretty" }).logFormat, "pretty");
  assert.throws(() => loadConfig({ LOG_FORMAT: "text" }), /^ConfigError: Invalid configuration: LOG_FORMAT: /);
});

Deno.test("SMTP: AUTH any by default, TLS optional, no SMTPS listener; certificate and key come together", () => {
  const d = loadConfig({});
  assert.equal(d.smtpAuth, "any");
  assert.equal(d.smtpRequireTls, false);
  assert.equal(d.smtpsPort, undefined);
  assert.equal(d.smtpTlsCert, undefined);
  const c = loadConfig({
    SMTP_AUTH: "api-key",
    SMTP_REQUIRE_TLS: "true",
    SMTPS_PORT: "4650",
    SMTP_TLS_CERT: "/etc/tls/cert.pem",
    SMTP_TLS_KEY: "/etc/tls/key.pem",
  });
  assert.deepEqual(
    [c.smtpAuth, c.smtpRequireTls, c.smtpsPort, c.smtpTlsCert, c.smtpTlsKey],
    ["api-key", true, 4650, "/etc/tls/cert.pem", "/etc/tls/key.pem"],
  );
  assert.equal(loadConfig({ SMTP_AUTH: "off" }).smtpAuth, "off");

  const refusals: Array<[Record<string, string>, string]> = [
    [
      { SMTP_TLS_CERT: "/etc/tls/cert.pem" },
      "SMTP_TLS_CERT: is set without SMTP_TLS_KEY: set both (PEM files of the certificate and its key), or neither " +
      "for a self-signed certificate",
    ],
    [
      { SMTP_TLS_KEY: "/etc/tls/key.pem" },
      "SMTP_TLS_KEY: is set without SMTP_TLS_CERT: set both (PEM files of the certificate and its key), or neither " +
      "for a self-signed certificate",
    ],
    [{ SMTPS_PORT: "2525" }, "SMTPS_PORT: must differ from SMTP_PORT (both are 2525)"],
    [{ SMTPS_PORT: "8000" }, "SMTPS_PORT: must differ from PORT (both are 8000)"],
  ];
  for (const [env, message] of refusals) {
    assert.throws(() => loadConfig(env), new ConfigError(`Invalid configuration: ${message}`), JSON.stringify(env));
  }
  assert.throws(() => loadConfig({ SMTP_AUTH: "apikey" }), /^ConfigError: Invalid configuration: SMTP_AUTH: /);
  assert.throws(
    () => loadConfig({ SMTP_REQUIRE_TLS: "yes" }),
    /^ConfigError: Invalid configuration: SMTP_REQUIRE_TLS: /,
  );
  // Both random: never the same port.
  assert.equal(loadConfig({ SMTP_PORT: "0", SMTPS_PORT: "0" }).smtpsPort, 0);
});

Deno.test("LOG_LEVEL takes LogTape's names in any letter case, and warn for warning", () => {
  const cases: Array<[string, string]> = [
    ["warn", "warning"],
    ["WARN", "warning"],
    ["Warn", "warning"],
    ["WARNING", "warning"],
    ["Info", "info"],
    ["TRACE", "trace"],
    ["debug", "debug"],
    ["Error", "error"],
    ["FATAL", "fatal"],
  ];
  for (const [value, level] of cases) assert.equal(loadConfig({ LOG_LEVEL: value }).logLevel, level, value);
  for (const value of ["loud", "warnings", "err", " info"]) {
    assert.throws(() => loadConfig({ LOG_LEVEL: value }), /^ConfigError: Invalid configuration: LOG_LEVEL: /, value);
  }
});

Deno.test("the error names every bad variable: 'Invalid configuration: VAR: message; VAR2: message'", () => {
  assert.throws(
    () => loadConfig({ PORT: "70000", ADMIN_TOKEN: "short", SERVICE_NAME: "InboxService" }),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.equal(err.name, "ConfigError");
      assert.match(err.message, /^Invalid configuration: PORT: [^;]+; ADMIN_TOKEN: must be at least 16 characters$/);
      return true;
    },
  );
  assert.throws(
    () => loadConfig({ ENCRYPTION_KEY: "not-a-key" }),
    new ConfigError(
      "Invalid configuration: ENCRYPTION_KEY: must be 32 random bytes in base64 (openssl rand -base64 32)",
    ),
  );
});

Deno.test("docs/configuration.md's table is exactly what `deno task config:table` prints", async () => {
  const readme = await Deno.readTextFile(new URL("../docs/configuration.md", import.meta.url));
  const start = "<!-- config:start -->";
  const end = "<!-- config:end -->";
  const from = readme.indexOf(start);
  const to = readme.indexOf(end);
  assert.ok(from >= 0 && to > from, `docs/configuration.md needs the ${start} and ${end} markers, in that order`);
  assert.equal(readme.indexOf(start, from + 1), -1, `docs/configuration.md has ${start} twice`);
  const section = readme.slice(from + start.length, to);
  assert.equal(
    section,
    `\n\n${configTable()}\n\n`,
    "docs/configuration.md's configuration table is stale: run `deno task config:table` and paste its output between the markers",
  );
});

Deno.test("every variable is documented, with its default from the schema", () => {
  const rows = configRows();
  assert.deepEqual(rows.map((r) => r.name), Object.keys(EnvSchema.shape));
  for (const row of rows) assert.ok(row.meaning.length > 0, row.name);
  const defaults = Object.fromEntries(rows.map((r) => [r.name, r.default]));
  assert.equal(defaults.PORT, "`8000`");
  assert.equal(defaults.DATABASE_URL, "unset");
  assert.equal(defaults.WEBHOOK_TRUSTED_HOSTS, "empty");
  assert.equal(defaults.COOKIE_SECURE, "`true`");
  assert.equal(defaults.SMTP_MAX_BYTES, "`10485760` (10 MiB)");
  assert.equal(defaults.MAX_BODY_BYTES, "`65536` (64 KiB)");
});

Deno.test("per-plan limits: plan=number pairs override the named plans; anything else is refused", () => {
  const d = loadConfig({});
  assert.deepEqual(d.inboxesPerAccount, { free: 10, pro: 100, business: 1000 });
  assert.deepEqual(d.webhookTestsPerMinute, { pro: 10, business: 30 });
  assert.deepEqual(d.redeliveriesPerMinute, { pro: 30, business: 100 });
  assert.deepEqual(loadConfig({ INBOXES_PER_ACCOUNT: " pro = 5 ,business=7" }).inboxesPerAccount, {
    free: 10,
    pro: 5,
    business: 7,
  });
  for (const bad of ["free=5", "pro=0", "pro", "pro=5,", "enterprise=3", "pro=-1", "pro=1.5"]) {
    assert.throws(
      () => loadConfig({ WEBHOOK_TESTS_PER_MINUTE: bad }),
      /WEBHOOK_TESTS_PER_MINUTE: must be a comma list of plan=number/,
      bad,
    );
  }
});
