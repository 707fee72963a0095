/**
 * Drill 6: fairness between tenants across two instances. Tenants A and A2
 * have 10 webhooks each whose receivers never answer, and a backlog of
 * deliveries to them (short: 800 and 400, full: 8,000 and 4,000); tenant B
 * then commits events one at a time. Each of B's deliveries must arrive long
 * before any hanging attempt can time out, and the hanging tenants hold
 * exactly their shares of the slots at the receiver. One instance at a time
 * sends an account's attempts (it holds the account), and shares its own 64
 * slots among the accounts it holds: A holds half of them; A2 half of what A
 * leaves when one instance holds both, half of the other instance's slots
 * when that one holds A2.
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
    // Half of what A leaves on one instance: the least A2 gets, on the instance that holds A.
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
    const holder = async (accountId: string) =>
      (await db.sql<{ worker: string }[]>`SELECT worker FROM delivery_owners WHERE account_id = ${accountId}`)[0]
        ?.worker;
    const oneInstance = await holder(a.account.id) === await holder(a2.account.id);
    const figures = {
      aQueued: A_EVENTS * 10,
      a2Queued: A2_EVENTS * 10,
      aSent: sent("/a/"),
      a2Sent: sent("/a2/"),
      oneInstanceHoldsBoth: oneInstance,
      bDelayMs: percentiles(delays),
    };
    report("fairness", figures);
    assert.equal(figures.aSent, aShare, "A never had more than its share in flight");
    assert.equal(
      figures.a2Sent,
      oneInstance ? a2Share : SLOTS / 2,
      "A2 never had more than its share in flight: half of what A leaves, or of the other instance's slots",
    );
  } finally {
    await hanging.close();
    await healthy.close();
    for (const s of services) await s.stop().catch(() => {});
    await db.close();
  }
});
