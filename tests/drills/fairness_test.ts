/**
 * Drill 6: fairness between tenants across two instances. Tenants A and A2
 * have 10 webhooks each whose receivers never answer, and a backlog of
 * deliveries to them (short: 800 and 400, full: 8,000 and 4,000); tenant B
 * then commits events one at a time. Each of B's deliveries must arrive long
 * before any hanging attempt can time out, and the hanging tenants hold
 * exactly their shares of the in-flight slots over both instances: A half of
 * the 64 slots, A2 half of what A leaves.
 */
import assert from "node:assert/strict";
import { createTestDb } from "../_helpers/db.ts";
import { startReceiver } from "../_helpers/receiver.ts";
import { serviceEnv, startService } from "../_helpers/process.ts";
import { commitInboxEvents } from "../_helpers/events.ts";
import { accountWithWebhooks, percentiles, report, scaled, sleep, waitUntil } from "./_support.ts";

// Long enough that no hanging attempt times out before the shares are counted, on a loaded machine too.
const TIMEOUT_MS = scaled(6_000, 10_000);
const A_EVENTS = scaled(80, 800);
const A2_EVENTS = scaled(40, 400);
const B_PROBES = scaled(5, 20);
const SLOTS = 64;

Deno.test("drill: two tenants' hanging receivers do not delay another tenant's deliveries, on two instances", async () => {
  const db = await createTestDb();
  const hanging = await startReceiver({ handler: { delayMs: 600_000 } });
  const healthy = await startReceiver();
  const env = serviceEnv(db, { DELIVERY_TIMEOUT_MS: String(TIMEOUT_MS), DELIVERY_CONCURRENCY: String(SLOTS) });
  const services = [await startService(env), await startService(env)];
  try {
    const [first, second] = services.map((s) => s.url) as [string, string];
    const sent = (prefix: string) => hanging.requests.filter((r) => r.path.startsWith(prefix)).length;
    const a = await accountWithWebhooks(first, 10, (i) => hanging.url(`/a/${i}`));
    await commitInboxEvents(db.sql, a.account.id, A_EVENTS, 100);
    const aShare = SLOTS / 2;
    await waitUntil(() => sent("/a/") >= aShare, 10_000, () => `A has ${sent("/a/")} of ${aShare}`);
    const a2 = await accountWithWebhooks(second, 10, (i) => hanging.url(`/a2/${i}`));
    await commitInboxEvents(db.sql, a2.account.id, A2_EVENTS, 100);
    const a2Share = (SLOTS - aShare) / 2;
    await waitUntil(() => sent("/a2/") >= a2Share, 10_000, () => `A2 has ${sent("/a2/")} of ${a2Share}`);

    const b = await accountWithWebhooks(second, 1, () => healthy.url("/b"));
    const delays: number[] = [];
    for (let i = 0; i < B_PROBES; i++) {
      const [event] = await commitInboxEvents(db.sql, b.account.id, 1);
      await waitUntil(() => healthy.requests.length > i, TIMEOUT_MS / 2, () => `B's probe ${i} not delivered`);
      delays.push(healthy.requests[i]!.receivedAt.getTime() - event!.committedAt);
      await sleep(100);
    }
    const held = async (accountId: string) =>
      (await db.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
        WHERE d.status = 'in_flight' AND w.account_id = ${accountId}`)[0]!.n;
    const figures = {
      aQueued: A_EVENTS * 10,
      a2Queued: A2_EVENTS * 10,
      aInFlight: await held(a.account.id),
      a2InFlight: await held(a2.account.id),
      bDelayMs: percentiles(delays),
    };
    report("fairness", figures);
    assert.equal(figures.aInFlight, aShare, "A holds half of the slots over both instances");
    assert.equal(figures.a2InFlight, a2Share, "A2 holds half of what A leaves");
    assert.equal(sent("/a/"), aShare, "A never had more than its share in flight");
    assert.equal(sent("/a2/"), a2Share, "A2 never had more than its share in flight");
  } finally {
    await hanging.close();
    await healthy.close();
    for (const s of services) await s.stop().catch(() => {});
    await db.close();
  }
});
