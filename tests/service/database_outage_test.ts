/**
 * A database outage over the real path: the instance reaches PostgreSQL
 * through a TCP proxy on loopback, the proxy is cut (connections closed, new
 * ones refused, as when the server restarts), and the API answers 503
 * SERVICE_UNAVAILABLE with Retry-After (never a 500), /readyz stays 503, SMTP
 * RCPT answers 451, the delivery queue keeps trying to claim a retry that
 * falls due, and one warning is logged for the whole outage; once the proxy
 * is back, 200s again, the retry is delivered, and one info line.
 */
import assert from "node:assert/strict";
import type { LogRecord } from "@logtape/logtape";
import { openDatabase } from "../../src/db/client.ts";
import { createTestDb, TEST_DATABASE_URL } from "../_helpers/db.ts";
import { createWebhook, newUser, startApp } from "../_helpers/app.ts";
import { capturedLogs } from "../_helpers/log_capture.ts";
import { startTcpProxy } from "../_helpers/tcp_proxy.ts";
import { waitUntil } from "../_helpers/wait.ts";
import { startReceiver } from "../_helpers/receiver.ts";
import { staticResolver } from "../_helpers/resolver.ts";
import { sendRaw } from "../smtp/_smtp_client.ts";
import { startSmtpServer } from "../../src/smtp/server.ts";
import { testSmtpTls } from "../_helpers/smtp_tls.ts";

const OUTAGE_WARNING = "The database does not answer ({reason}): requests answer 503 until it does";
const BACK_INFO = "The database answers again after {seconds} s; {refused} requests were answered 503 meanwhile";
const DELIVERY_FAILED = "Delivery of event {eventId} failed (attempt {attempt}): {reason}; {recorded}";

const template = (r: LogRecord) => r.rawMessage;
const atLeastWarning = (r: LogRecord) => ["warning", "error", "fatal"].includes(r.level);

Deno.test("a database outage answers 503 with Retry-After and SMTP 451, logs once whatever meets it, and recovers", async () => {
  const db = await createTestDb();
  const target = new URL(TEST_DATABASE_URL);
  const proxy = startTcpProxy({ hostname: target.hostname, port: Number(target.port || 5432) });
  const viaProxy = new URL(TEST_DATABASE_URL);
  viaProxy.host = `127.0.0.1:${proxy.port}`;
  const database = await openDatabase({ databaseUrl: viaProxy.href, dataDir: "", poolSize: 4, schema: db.schema });
  // Each event's first attempt fails; its retry (due 8 s later: `random` takes the low end of the jitter) succeeds.
  const receiver = await startReceiver({ handler: (_req, index) => ({ status: index % 2 === 0 ? 500 : 200 }) });
  const app = await startApp(database.sql, {
    listen: true,
    startDeliveries: true,
    env: { WEBHOOK_TRUSTED_HOSTS: "localhost", HOST: "127.0.0.1", SMTP_PORT: "0" },
    resolver: staticResolver({ localhost: ["127.0.0.1"] }),
    random: () => 0,
  });
  const smtp = await startSmtpServer(app.deps, { tls: await testSmtpTls() });
  try {
    const user = await newUser(app, "pro");
    const me = await app.request("/api/me", { cookie: user.cookie });
    assert.equal(me.status, 200);
    await me.body?.cancel();
    await createWebhook(app, user, receiver.url("/hook"), ["message.received"]);
    const created = await app.request("/api/inboxes", { method: "POST", json: {}, cookie: user.cookie });
    const inbox = await created.json() as { address: string };
    const domain = inbox.address.split("@")[1]!;

    for (let outage = 1; outage <= 2; outage++) {
      // A message whose delivery fails once: its retry falls due during the outage.
      const sent = await sendRaw(
        smtp.port,
        { from: "s@example.com", to: [inbox.address] },
        `From: s@example.com\r\nTo: ${inbox.address}\r\nSubject: before outage ${outage}\r\n\r\nhello\r\n`,
      );
      assert.equal(sent.data?.code, 250);
      await waitUntil(
        () => capturedLogs.filter((r) => template(r) === DELIVERY_FAILED).length === outage,
        20_000,
        () => `the failed first attempt before outage ${outage}, recorded with its retry`,
      );
      const from = capturedLogs.length;
      proxy.cut();

      // Nothing else touches the database now: the queue's next claim (after the attempt that just
      // finished, or when the retry falls due) finds it gone, and it keeps claiming every 250 ms.
      await waitUntil(
        () => app.deps.databaseOutage.down || capturedLogs.slice(from).some(atLeastWarning),
        30_000,
        () => "the queue to claim while the database is cut",
      );
      assert.deepEqual(
        capturedLogs.slice(from).filter(atLeastWarning).map(template),
        [OUTAGE_WARNING],
        "the queue's failed claim is the outage's one warning",
      );

      // Session lookups, logins, lists and creations: every one needs the database.
      const requests: Array<[string, RequestInit & { json?: unknown; cookie?: string }]> = [
        ["/api/me", { cookie: user.cookie }],
        ["/api/inboxes", { cookie: user.cookie }],
        ["/api/inboxes", { method: "POST", json: {}, cookie: user.cookie }],
        ["/api/user-webhooks", { cookie: user.cookie }],
        ["/api/auth/login", { method: "POST", json: { email: user.email, password: "correct horse" } }],
        ["/api/me", { cookie: user.cookie }],
      ];
      for (const [path, init] of requests) {
        const res = await app.request(path, init);
        assert.equal(res.status, 503, `${init.method ?? "GET"} ${path} during outage ${outage}`);
        assert.equal(res.headers.get("retry-after"), "5");
        assert.deepEqual(await res.json(), {
          success: false,
          error: "Service temporarily unavailable, retry shortly",
          code: "SERVICE_UNAVAILABLE",
        });
      }
      // A RCPT that needs a lookup (an address not seen live in the last second) is deferred.
      const rcpt = await sendRaw(
        smtp.port,
        { from: "s@example.com", to: [`nobody-${outage}@${domain}`] },
        "",
      );
      assert.equal(rcpt.rcpt[0]!.code, 451, JSON.stringify(rcpt.rcpt));
      const ready = await app.request("/readyz");
      assert.equal(ready.status, 503, "/readyz while the database is down");
      assert.deepEqual(await ready.json(), { status: "unavailable" });
      const health = await app.request("/healthz");
      assert.equal(health.status, 200, "the process itself is alive");
      await health.body?.cancel();

      const during = capturedLogs.slice(from);
      const warnings = during.filter(atLeastWarning);
      assert.deepEqual(warnings.map(template), [OUTAGE_WARNING], "one warning for the whole outage, no error");
      assert.match(String(warnings[0]!.properties.reason), /^connection (refused|closed by the server)$/);
      assert.equal(app.deps.databaseOutage.down, true);

      proxy.restore();
      await waitUntil(
        async () => {
          const res = await app.request("/readyz");
          await res.body?.cancel();
          return res.status === 200;
        },
        20_000,
        () => "/readyz to answer 200 once the database is back",
      );
      await waitUntil(
        () => capturedLogs.slice(from).some((r) => template(r) === BACK_INFO),
        20_000,
        () => "the line saying the database is back",
      );
      const back = capturedLogs.slice(from).filter((r) => template(r) === BACK_INFO);
      assert.equal(back.length, 1);
      assert.equal(back[0]!.level, "info");
      assert.equal(Number(back[0]!.properties.refused), requests.length, "the 503s are counted, not claims or RCPTs");
      assert.equal(app.deps.databaseOutage.down, false);
      // The queue kept trying through the outage and delivers the retry once the database is back.
      await receiver.waitFor(2 * outage, 20_000);

      const again = await app.request("/api/me", { cookie: user.cookie });
      assert.equal(again.status, 200, "answers again once the database is back");
      await again.body?.cancel();
      const created = await app.request("/api/inboxes", { method: "POST", json: {}, cookie: user.cookie });
      assert.equal(created.status, 201);
      await created.body?.cancel();
      assert.deepEqual(capturedLogs.slice(from).filter(atLeastWarning).map(template), [OUTAGE_WARNING]);
    }
  } finally {
    await smtp.close();
    await app.close();
    await receiver.close();
    await database.close();
    proxy.close();
    await db.close();
  }
});
