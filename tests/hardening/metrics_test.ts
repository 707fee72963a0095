/**
 * Metrics never grow with attacker input (design, "Security posture"): an
 * invented method is the label `OTHER`, a path no route matches is the route
 * `unmatched`, so hundreds of junk requests add no series to /metrics. And
 * with METRICS_TOKEN set, /metrics answers only the scraper that presents it.
 */
import assert from "node:assert/strict";
import { createTestDb } from "../_helpers/db.ts";
import { ADMIN_TOKEN, startApp, type TestApp } from "../_helpers/app.ts";
import { expectError } from "../_helpers/expect.ts";
import { loadConfig } from "../../src/config.ts";
import { ConfigError } from "../../src/shared/config_error.ts";
import { rawBurst, rawRequest } from "./raw_http.ts";
import { staticTokenHints } from "../../src/auth/hints.ts";

const METRICS_TOKEN = "metrics-token-0123456789abcdef";

/** The sample lines of /metrics (comments left out), as read without a token. */
async function seriesLines(app: TestApp, init: RequestInit = {}): Promise<string[]> {
  const res = await app.request("/metrics", init);
  assert.equal(res.status, 200);
  return (await res.text()).split("\n").filter((l) => l !== "" && !l.startsWith("#"));
}

/** The `http_requests_total` sample with exactly these labels, or undefined. */
function requestCount(lines: string[], method: string, route: string, status: number): number | undefined {
  const prefix = `http_requests_total{method="${method}",route="${route}",status="${status}"} `;
  const line = lines.find((l) => l.startsWith(prefix));
  return line === undefined ? undefined : Number(line.slice(prefix.length));
}

/** The junk request number `i`: an invented method, and a path under /, /api or /admin that no route has. */
function junk(i: number): { method: string; path: string } {
  const method = `X${i.toString(36).toUpperCase()}Z${i}`;
  const path = [`/junk/${i}`, `/api/junk/${i}`, `/admin/junk/${i}`, `/api/inboxes/${i}`][i % 4]!;
  return { method, path };
}

Deno.test("requests with invented methods and unknown paths add no series to /metrics", async () => {
  const db = await createTestDb();
  const app = await startApp(db.sql);
  try {
    // One request of each kind first, so every series the burst may touch exists.
    for (let i = 0; i < 4; i++) {
      const { method, path } = junk(1_000_000 + i);
      await rawRequest(app.baseUrl, method, path);
      await rawRequest(app.baseUrl, "GET", path);
    }
    await rawRequest(app.baseUrl, "GET", "/admin/junk/x", { authorization: `Bearer ${ADMIN_TOKEN}` });
    await seriesLines(app);
    const before = await seriesLines(app);

    const statuses = await rawBurst(app.baseUrl, 400, 8, junk);
    assert.equal([...statuses.values()].reduce((a, b) => a + b, 0), 400);
    for (const status of statuses.keys()) assert.ok([401, 404].includes(status), `status ${status}`);
    // Lowercase is another method in HTTP (names are case-sensitive), hence also OTHER.
    assert.equal((await rawRequest(app.baseUrl, "get", "/healthz")).status, 404);
    // A known path with an invented method matches no route either.
    assert.equal((await rawRequest(app.baseUrl, "FROBNICATE", "/healthz")).status, 404);

    const after = await seriesLines(app);
    assert.equal(after.length, before.length, "the burst added series");
    assert.deepEqual(after.map((l) => l.replace(/ [^ ]+$/, "")), before.map((l) => l.replace(/ [^ ]+$/, "")));
    const text = after.join("\n");
    assert.doesNotMatch(text, /method="X[0-9A-Z]+Z\d+"/, "no invented method is a label");
    assert.doesNotMatch(text, /method="get"|FROBNICATE/);
    assert.doesNotMatch(text, /junk/, "no raw path is a label");
    const otherUnmatched = (requestCount(after, "OTHER", "unmatched", 404) ?? 0) +
      (requestCount(after, "OTHER", "unmatched", 401) ?? 0);
    assert.ok(otherUnmatched >= 402, `OTHER/unmatched counts ${otherUnmatched}`);
  } finally {
    await app.close();
    await db.close();
  }
});

Deno.test("the route label is the matched pattern, or one `unmatched` value", async () => {
  const db = await createTestDb();
  const app = await startApp(db.sql);
  try {
    await (await app.request("/api/me")).body?.cancel(); // 401 before the handler: still its route
    await (await app.request("/api/inboxes/inb_123")).body?.cancel();
    await (await app.request("/nope/1")).body?.cancel();
    await (await app.request("/nope/2")).body?.cancel();
    await (await app.request("/api/nope", { method: "POST" })).body?.cancel(); // 401 from /api's authentication
    await (await app.request("/admin/nope", { auth: ADMIN_TOKEN })).body?.cancel(); // past the admin guard
    await (await app.request("/healthz", { method: "HEAD" })).body?.cancel();
    const lines = await seriesLines(app);
    assert.equal(requestCount(lines, "GET", "/api/me", 401), 1);
    assert.equal(requestCount(lines, "GET", "/api/inboxes/:id", 401), 1);
    assert.equal(requestCount(lines, "GET", "unmatched", 404), 3);
    assert.equal(requestCount(lines, "POST", "unmatched", 401), 1);
    assert.equal(requestCount(lines, "HEAD", "/healthz", 200), 1);
    const routes = new Set(lines.flatMap((l) => /route="([^"]*)"/.exec(l)?.[1] ?? []));
    for (const route of routes) assert.ok(route === "unmatched" || route.startsWith("/"), route);
    for (const route of routes) assert.ok(!route.includes("*"), `a middleware pattern is not a route: ${route}`);
  } finally {
    await app.close();
    await db.close();
  }
});

Deno.test("METRICS_TOKEN: /metrics needs the bearer token; without the variable it stays open", async () => {
  const db = await createTestDb();
  const open = await startApp(db.sql);
  const guarded = await startApp(db.sql, { env: { METRICS_TOKEN } });
  try {
    const plain = await open.request("/metrics");
    assert.equal(plain.status, 200);
    assert.match(await plain.text(), /# TYPE http_requests_total counter/);

    const missing = await guarded.request("/metrics");
    assert.equal(missing.headers.get("www-authenticate"), 'Bearer realm="metrics"');
    assert.deepEqual(
      await (await expectError(missing, 401, "UNAUTHORIZED", "Unauthorized")),
      {
        success: false,
        error: "Unauthorized",
        code: "UNAUTHORIZED",
        hint: staticTokenHints("METRICS_TOKEN").missing,
      },
    );
    for (
      const authorization of [
        `Bearer ${METRICS_TOKEN}x`,
        `Bearer ${METRICS_TOKEN.slice(0, -1)}`,
        `Bearer ${ADMIN_TOKEN}`,
        `Basic ${btoa(`user:${METRICS_TOKEN}`)}`,
        METRICS_TOKEN,
        "Bearer ",
      ]
    ) {
      const res = await guarded.request("/metrics", { headers: { authorization } });
      await expectError(res, 401, "UNAUTHORIZED", "Unauthorized");
    }
    const lines = await seriesLines(guarded, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    assert.equal(requestCount(lines, "GET", "/metrics", 401), 7, "refused scrapes are counted too");
    const lower = await guarded.request("/metrics", { headers: { authorization: `bearer ${METRICS_TOKEN}` } });
    assert.equal(lower.status, 200, "the scheme is case-insensitive");
    await lower.body?.cancel();
    // The token guards /metrics only.
    const health = await guarded.request("/healthz");
    assert.equal(health.status, 200);
    await health.body?.cancel();
  } finally {
    await guarded.close();
    await open.close();
    await db.close();
  }
});

Deno.test("METRICS_TOKEN shorter than 16 characters stops start-up", () => {
  assert.throws(() => loadConfig({ METRICS_TOKEN: "short" }), (err) => {
    assert.ok(err instanceof ConfigError);
    assert.match(err.message, /METRICS_TOKEN: must be at least 16 characters/);
    return true;
  });
  assert.equal(loadConfig({}).metricsToken, undefined);
  assert.equal(loadConfig({ METRICS_TOKEN }).metricsToken, METRICS_TOKEN);
});
