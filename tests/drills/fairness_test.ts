/**
 * Drill 6: fairness between tenants across two instances. Tenant A has 10
 * webhooks whose receivers never answer and a backlog of deliveries to them
 * (short: 80, full: 800); tenant B then commits events one at a time. Each of
 * B's deliveries must arrive long before any of A's attempts can time out,
 * and A never holds more than its per-account share of the in-flight slots,
 * counted over both instances.
 */
import assert from "node:assert/strict";
import { createTestDb } from "../_helpers/db.ts";
import { startReceiver } from "../_helpers/receiver.ts";
import { serviceEnv, startService } from "../_helpers/process.ts";
import { commitInboxEvents } from "../_helpers/events.ts";
import { newAccount, newWebhook, percentiles, report, scaled, sleep, waitUntil } from "./_support.ts";

const TIMEOUT_MS = scaled(3_000, 10_000);
const A_EVENTS = scaled(8, 80);
const B_PROBES = scaled(5, 20);
const PER_ACCOUNT = 32;

Deno.test("drill: one tenant's hanging receivers do not delay another tenant's deliveries, on two instances", async () => {
  const db = await createTestDb();
  const hanging = await startReceiver({ handler: { delayMs: 600_000 } });
  const healthy = await startReceiver();
  const env = serviceEnv(db, {
    DELIVERY_TIMEOUT_MS: String(TIMEOUT_MS),
    DELIVERY_CONCURRENCY_PER_ACCOUNT: String(PER_ACCOUNT),
  });
  const services = [await startService(env), await startService(env)];
  try {
    const url = services[0]!.url;
    const a = await newAccount(url);
    for (let i = 0; i < 10; i++) await newWebhook(url, a, hanging.url(`/a${i}`));
    await commitInboxEvents(db.sql, a.id, A_EVENTS);
    const aInFlight = Math.min(A_EVENTS * 3, PER_ACCOUNT);
    await waitUntil(() => hanging.requests.length >= aInFlight, 10_000, () => `A has ${hanging.requests.length}`);

    const b = await newAccount(services[1]!.url);
    await newWebhook(services[1]!.url, b, healthy.url("/b"));
    const delays: number[] = [];
    for (let i = 0; i < B_PROBES; i++) {
      const [event] = await commitInboxEvents(db.sql, b.id, 1);
      await waitUntil(() => healthy.requests.length > i, TIMEOUT_MS / 2, () => `B's probe ${i} not delivered`);
      delays.push(healthy.requests[i]!.receivedAt.getTime() - event!.committedAt);
      await sleep(100);
    }
    const flying = await db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
      WHERE d.status = 'in_flight' AND w.account_id = ${a.id}`;
    report("fairness", {
      aQueued: A_EVENTS * 10,
      aInFlight: flying[0]!.n,
      bDelayMs: percentiles(delays),
    });
    assert.ok(flying[0]!.n <= PER_ACCOUNT, `A holds ${flying[0]!.n} slots over both instances`);
    assert.equal(hanging.requests.length, aInFlight, "A never had more than its share in flight");
  } finally {
    await hanging.close();
    await healthy.close();
    for (const s of services) await s.stop().catch(() => {});
    await db.close();
  }
});
