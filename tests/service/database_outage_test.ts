/**
 * A database outage over the real path: the instance reaches PostgreSQL
 * through a TCP proxy on loopback, the proxy is cut (connections closed, new
 * ones refused, as when the server restarts), and the API answers 503
 * SERVICE_UNAVAILABLE with Retry-After (never a 500), /readyz stays 503, one
 * warning is logged for the whole outage; once the proxy is back, 200s again
 * and one info line.
 */
import assert from "node:assert/strict";
import type { LogRecord } from "@logtape/logtape";
import { openDatabase } from "../../src/db/client.ts";
import { createTestDb, TEST_DATABASE_URL } from "../_helpers/db.ts";
import { newUser, startApp } from "../_helpers/app.ts";
import { capturedLogs } from "../_helpers/log_capture.ts";
import { startTcpProxy } from "../_helpers/tcp_proxy.ts";
import { waitUntil } from "../_helpers/wait.ts";

const OUTAGE_WARNING = "The database does not answer ({reason}): requests answer 503 until it does";
const BACK_INFO = "The database answers again after {seconds} s; {refused} requests were answered 503 meanwhile";

const template = (r: LogRecord) => r.rawMessage;
const atLeastWarning = (r: LogRecord) => ["warning", "error", "fatal"].includes(r.level);

Deno.test("a database outage answers 503 with Retry-After, logs once, and recovers", async () => {
  const db = await createTestDb();
  const target = new URL(TEST_DATABASE_URL);
  const proxy = startTcpProxy({ hostname: target.hostname, port: Number(target.port || 5432) });
  const viaProxy = new URL(TEST_DATABASE_URL);
  viaProxy.host = `127.0.0.1:${proxy.port}`;
  const database = await openDatabase({ databaseUrl: viaProxy.href, dataDir: "", poolSize: 4, schema: db.schema });
  const app = await startApp(database.sql, { listen: true, startDeliveries: true });
  try {
    const user = await newUser(app, "pro");
    const me = await app.request("/api/me", { cookie: user.cookie });
    assert.equal(me.status, 200);
    await me.body?.cancel();

    for (let outage = 1; outage <= 2; outage++) {
      const from = capturedLogs.length;
      proxy.cut();

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
      assert.ok(Number(back[0]!.properties.refused) >= requests.length, "the 503s are counted");
      assert.equal(app.deps.databaseOutage.down, false);

      const again = await app.request("/api/me", { cookie: user.cookie });
      assert.equal(again.status, 200, "answers again once the database is back");
      await again.body?.cancel();
      const created = await app.request("/api/inboxes", { method: "POST", json: {}, cookie: user.cookie });
      assert.equal(created.status, 201);
      await created.body?.cancel();
      assert.deepEqual(capturedLogs.slice(from).filter(atLeastWarning).map(template), [OUTAGE_WARNING]);
    }
  } finally {
    await app.close();
    await database.close();
    proxy.close();
    await db.close();
  }
});
