/**
 * Drill 5: 1,000 concurrent API requests against one service process with the
 * default pool (DATABASE_POOL_SIZE 10). A mix of reads and writes with the API
 * keys of several Business accounts (each with a webhook, so every created
 * inbox also queues a delivery): no response may be a 5xx, no request may fail
 * to connect, and `/readyz` must be 200 afterwards.
 */
import assert from "node:assert/strict";
import { createTestDb } from "../_helpers/db.ts";
import { startReceiver } from "../_helpers/receiver.ts";
import { apiAt, createWebhook, newApiKey, newOperatorAccount } from "../_helpers/app.ts";
import { percentiles, report, serviceLog, waitUntil } from "./_support.ts";
import { serviceEnv, startService } from "../_helpers/process.ts";

/** The same in both scales: the figure. */
const REQUESTS = 1_000;
const ACCOUNTS = 5;

const KINDS = [
  { name: "GET /api/user-webhooks", method: "GET", path: "/api/user-webhooks" },
  { name: "GET /api/inboxes", method: "GET", path: "/api/inboxes" },
  { name: "POST /api/inboxes", method: "POST", path: "/api/inboxes" },
  { name: "GET /api/me", method: "GET", path: "/api/me" },
] as const;

Deno.test("drill: 1,000 concurrent API requests: no 5xx, no connection error", async () => {
  const db = await createTestDb();
  const receiver = await startReceiver();
  const service = await startService(serviceEnv(db));
  let exitCode: number | undefined;
  try {
    const api = apiAt(service.url);
    const keys: string[] = [];
    for (let i = 0; i < ACCOUNTS; i++) {
      const account = await newOperatorAccount(api, "business");
      await createWebhook(api, account, receiver.url(`/burst${i}`));
      keys.push((await newApiKey(api, account, "drill")).key);
    }

    const statuses: Record<string, number> = {};
    const byKind: Record<string, Record<string, number>> = {};
    const errors: Record<string, number> = {};
    const durations: number[] = [];
    const count = (map: Record<string, number>, key: string) => map[key] = (map[key] ?? 0) + 1;

    const started = performance.now();
    await Promise.all(Array.from({ length: REQUESTS }, async (_, i) => {
      const kind = KINDS[i % KINDS.length]!;
      const headers: Record<string, string> = { authorization: `Bearer ${keys[i % keys.length]}` };
      if (kind.method === "POST") headers["content-type"] = "application/json";
      const t0 = performance.now();
      try {
        const res = await fetch(service.url + kind.path, {
          method: kind.method,
          headers,
          ...(kind.method === "POST" ? { body: JSON.stringify({ ttlSeconds: 600 }) } : {}),
          signal: AbortSignal.timeout(60_000),
        });
        await res.arrayBuffer();
        count(statuses, String(res.status));
        count(byKind[kind.name] ??= {}, String(res.status));
      } catch (err) {
        count(statuses, "error");
        count(errors, String((err as Error).message ?? err).slice(0, 120));
      } finally {
        durations.push(performance.now() - t0);
      }
    }));
    const wallMs = Math.round(performance.now() - started);

    const ready = await fetch(`${service.url}/readyz`);
    await ready.body?.cancel();
    const serverErrors = Object.entries(statuses).filter(([s]) => Number(s) >= 500).reduce((n, [, c]) => n + c, 0);
    const created = byKind["POST /api/inboxes"]?.["201"] ?? 0;
    // Every created inbox emitted inbox.created to its account's webhook.
    await waitUntil(() => receiver.requests.length >= created, 60_000, () => `${receiver.requests.length}/${created}`);
    const latency = percentiles(durations);
    exitCode = await service.stop();
    report("api-burst", {
      requests: REQUESTS,
      accounts: ACCOUNTS,
      wallMs,
      requestsPerSecond: Math.round(REQUESTS / (wallMs / 1000)),
      statuses,
      byKind,
      connectionErrors: errors,
      latencyMs: {
        p50: Math.round(latency.p50),
        p95: Math.round(latency.p95),
        p99: Math.round(latency.p99),
        max: Math.round(latency.max),
      },
      readyzAfter: ready.status,
      webhookDeliveries: receiver.requests.length,
      serviceLog: await serviceLog(service.stderr),
    });
    assert.equal(statuses.error ?? 0, 0, `connection errors: ${JSON.stringify(errors)}`);
    assert.equal(serverErrors, 0, `responses with status >= 500: ${JSON.stringify(statuses)}`);
    assert.equal(ready.status, 200, "/readyz 200 after the burst");
    assert.equal(exitCode, 0, "the service stops cleanly");
  } finally {
    if (exitCode === undefined) await service.stop();
    await receiver.close();
    await db.close();
  }
});
