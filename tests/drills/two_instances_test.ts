/**
 * Drill 3: two instances on one database, one killed (kill -9) while it holds
 * leased attempts to a slow receiver. The survivor must deliver everything,
 * the victim's leased attempts included once its lease on their account
 * (LEASE_MS, renewed by a heartbeat while it holds attempts) has run out,
 * without a restart or any manual step.
 *
 * The survivor starts once the victim holds leases: one instance at a time
 * sends an account's attempts (it holds the account), so with both running
 * from the start either one may hold this single account, and the victim
 * sometimes held none. The survivor takes the account over once the victim's
 * lease on it has run out, with those of its attempts.
 */
import { LEASE_MS } from "../../src/deliveries/lease_keeper.ts";
import assert from "node:assert/strict";
import { createTestDb } from "../_helpers/db.ts";
import { startReceiver } from "../_helpers/receiver.ts";
import {
  accountWithWebhooks,
  deliveredCount,
  pairKey,
  pairs,
  report,
  scaled,
  waitAllDelivered,
  waitAllSucceeded,
  waitUntil,
} from "./_support.ts";
import { serviceEnv, type ServiceProcess, startService } from "../_helpers/process.ts";
import { commitInboxEvents } from "../_helpers/events.ts";

const EVENTS = scaled(100, 400);
const WEBHOOKS = 2;
const RECEIVER_DELAY_MS = 1_000;
const TIMEOUT_MS = 3_000;
/** The victim is killed once it holds at least this many leased attempts. */
const MIN_LEASED = 10;

Deno.test("drill: two instances, one killed holding leases: the survivor delivers everything", async () => {
  const db = await createTestDb();
  const receiver = await startReceiver({ handler: { delayMs: RECEIVER_DELAY_MS } });
  const env = serviceEnv(db, { DELIVERY_TIMEOUT_MS: String(TIMEOUT_MS) });
  const victim = await startService(env);
  let survivor: ServiceProcess | undefined;
  try {
    const { account, webhooks } = await accountWithWebhooks(victim.url, WEBHOOKS, (i) => receiver.url(`/t${i}`));
    const events = await commitInboxEvents(db.sql, account.id, EVENTS);
    const expected = EVENTS * WEBHOOKS;

    // Worker ids are `host:pid:random`; the child's pid is the service's own.
    const victimWorker = `%:${victim.pid}:%`;
    /**
     * The attempts the victim holds whose request the receiver has seen: not
     * finished, of the account it holds (a claim leaves them pending; the
     * heartbeat marks in flight those under way for a while), with the
     * victim's lease on the account.
     */
    const victimHolds = async () => {
      const rows = await db.sql<{ id: string; eventId: string; webhookId: string; leaseUntil: Date }[]>`
        SELECT d.id, d.event_id, d.webhook_id, o.lease_until FROM deliveries d
        JOIN webhooks w ON w.id = d.webhook_id JOIN delivery_owners o ON o.account_id = w.account_id
        WHERE o.worker LIKE ${victimWorker} AND d.status IN ('pending', 'in_flight')`;
      const seen = pairs(receiver);
      return rows.filter((r) => seen.has(pairKey(r.webhookId, r.eventId)));
    };
    // Kill it while its requests are at the receiver (waiting out the delay), not before they left.
    let leased = 0;
    await waitUntil(
      async () => {
        leased = (await victimHolds()).length;
        return leased >= MIN_LEASED;
      },
      30_000,
      () => `the victim holds ${leased} leased attempts the receiver has seen`,
    );
    survivor = await startService(env);
    // The survivor's start takes a moment, during which the victim's exchanges end and others begin.
    await waitUntil(async () => (await victimHolds()).length >= MIN_LEASED, 30_000, () => "the victim holds too few");
    await victim.kill();
    const killedAt = Date.now();
    // Read once it is dead (nothing of its changes any more), before its lease runs out and the survivor takes over.
    const held = await victimHolds();
    assert.ok(held.length > 0, "the victim died holding leased attempts");
    const leaseEnds = Math.max(...held.map((h) => h.leaseUntil.getTime()));

    await waitAllDelivered(receiver, webhooks, events, 120_000);
    await waitAllSucceeded(db, TIMEOUT_MS + 5_000 + 60_000);
    const settledAt = Date.now();

    // Each attempt the victim held was sent again by the survivor after the kill.
    const heldKeys = new Set(held.map((h) => pairKey(h.webhookId, h.eventId)));
    /** First receipt after the kill of each attempt the victim held. */
    const resent = new Map<string, number>();
    for (const r of receiver.requests) {
      const key = pairKey(r.headers["x-webhook-id"] ?? "?", JSON.parse(r.body).id);
      if (heldKeys.has(key) && r.receivedAt.getTime() > killedAt && !resent.has(key)) {
        resent.set(key, r.receivedAt.getTime());
      }
    }
    // One clock (this machine's) stamps leases and receipts; 100 ms covers rounding.
    const early = held.filter((h) =>
      (resent.get(pairKey(h.webhookId, h.eventId)) ?? Infinity) < h.leaseUntil.getTime() - 100
    );
    const rows = await db.sql<{ id: string; status: string; claimedBy: string }[]>`
      SELECT id, status, claimed_by FROM deliveries WHERE id = ANY(${held.map((h) => h.id)})`;
    const lastResent = Math.max(...resent.values());
    const byWorker = await db.sql<{ worker: string; n: number }[]>`
      SELECT claimed_by AS worker, count(*)::int AS n FROM deliveries GROUP BY claimed_by ORDER BY claimed_by`;
    report("two-instances", {
      events: EVENTS,
      webhooks: WEBHOOKS,
      expectedPairs: expected,
      lost: expected - deliveredCount(receiver, webhooks, events),
      requests: receiver.requests.length,
      duplicates: receiver.requests.length - expected,
      victimLeased: held.length,
      leaseLeftAtKillMs: leaseEnds - killedAt,
      killToVictimWorkResentMs: lastResent - killedAt,
      leaseEndToResentMs: lastResent - leaseEnds,
      killToSettledMs: settledAt - killedAt,
      resentBeforeLeaseEnd: early.length,
      rowsPerWorker: byWorker.map((r) => r.n),
    });
    assert.equal(resent.size, heldKeys.size, "every attempt the victim held was sent again after the kill");
    assert.ok(rows.every((r) => r.status === "succeeded"), "the victim's attempts ended succeeded");
    assert.ok(rows.every((r) => !r.claimedBy.includes(`:${victim.pid}:`)), "by the survivor");
    assert.equal(early.length, 0, "none sent again before its lease ran out (the holder could still be alive)");
    // Short leases renewed by a heartbeat: a dead instance's work is free again
    // within one lease of the kill, not after the delivery timeout.
    assert.ok(leaseEnds - killedAt <= LEASE_MS, `the victim's leases ran ${leaseEnds - killedAt} ms past the kill`);
  } finally {
    await victim.kill().catch(() => {});
    if (survivor) assert.equal(await survivor.stop(), 0, "the survivor stops cleanly");
    await receiver.close();
    await db.close();
  }
});
