/**
 * Drill 1: kill -9 mid-burst, then restart. Events keep being committed while
 * the service delivers them; the process is killed with SIGKILL half way and a
 * new one started. Every (webhook, event) pair must reach the receiver at
 * least once; repeats (attempts in flight at the kill) are counted, not refused.
 */
import assert from "node:assert/strict";
import { createTestDb } from "../_helpers/db.ts";
import { startReceiver } from "../_helpers/receiver.ts";
import {
  accountWithWebhooks,
  deliveredCount,
  report,
  scaled,
  sleep,
  statusCounts,
  waitAllDelivered,
  waitAllSucceeded,
  waitUntil,
} from "./_support.ts";
import { serviceEnv, type ServiceProcess, startService } from "../_helpers/process.ts";
import { commitInboxEvents, type Committed } from "../_helpers/events.ts";

const EVENTS = scaled(300, 2000);
const WEBHOOKS = 3;
/** Events per transaction, and the pause between transactions: a burst that lasts a while. */
const BATCH = 10;
const PAUSE_MS = scaled(15, 10);

Deno.test("drill: kill -9 mid-burst, then restart: 0 lost", async () => {
  const db = await createTestDb();
  const receiver = await startReceiver({ handler: { delayMs: 10 } });
  // Leases last LEASE_MS (2 s) and are renewed while an attempt runs: the killed instance's attempts come back within 2 s.
  const env = serviceEnv(db, { DELIVERY_TIMEOUT_MS: "3000" });
  const first = await startService(env);
  let second: ServiceProcess | undefined;
  try {
    const { account, webhooks } = await accountWithWebhooks(first.url, WEBHOOKS, (i) => receiver.url(`/k${i}`));
    const expected = EVENTS * WEBHOOKS;

    const events: Committed[] = [];
    const started = Date.now();
    const emitting = (async () => {
      for (let i = 0; i < EVENTS; i += BATCH) {
        events.push(...await commitInboxEvents(db.sql, account.id, Math.min(BATCH, EVENTS - i), BATCH));
        await sleep(PAUSE_MS);
      }
    })();

    await waitUntil(() => receiver.requests.length >= expected / 3, 120_000, () => `${receiver.requests.length}`);
    await first.kill();
    const killedAt = Date.now();
    const atKill = { received: receiver.requests.length, committed: events.length, rows: await statusCounts(db) };
    assert.ok(
      (atKill.rows.pending ?? 0) + (atKill.rows.in_flight ?? 0) > 0 || atKill.committed < EVENTS,
      "the kill happened mid-burst, with work left",
    );

    // The service is down for a moment while events keep coming (the outbox holds them).
    await sleep(500);
    second = await startService(env);
    const restartedAt = Date.now();
    await emitting;
    assert.equal(events.length, EVENTS);

    await waitAllDelivered(receiver, webhooks, events, 120_000);
    const allPairsAt = Date.now();
    // Repeats of the killed attempts arrive after their lease: let them finish too.
    await waitAllSucceeded(db, 60_000);
    const settledAt = Date.now();
    const lost = expected - deliveredCount(receiver, webhooks, events);
    const duplicates = receiver.requests.length - expected;
    report("kill-9", {
      events: EVENTS,
      webhooks: WEBHOOKS,
      expectedPairs: expected,
      lost,
      requests: receiver.requests.length,
      duplicates,
      receivedAtKill: atKill.received,
      committedAtKill: atKill.committed,
      rowsAtKill: atKill.rows,
      downMs: restartedAt - killedAt,
      killToAllDeliveredMs: allPairsAt - killedAt,
      restartToAllDeliveredMs: allPairsAt - restartedAt,
      killToRepeatsSettledMs: settledAt - killedAt,
      burstMs: allPairsAt - started,
    });
    assert.equal(lost, 0, "every (webhook, event) pair delivered at least once");
  } finally {
    await first.kill().catch(() => {});
    if (second) assert.equal(await second.stop(), 0, "the restarted service stops cleanly");
    await receiver.close();
    await db.close();
  }
});
