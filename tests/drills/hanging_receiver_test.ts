/**
 * Drill 4: a receiver that hangs on every request must not slow a healthy
 * receiver's deliveries. One service, one account, the same steady stream of
 * events in two phases: first with only the healthy webhook, then with a
 * second webhook whose receiver hangs (past the delivery timeout) on every
 * request. The healthy receiver's latency (event commit -> receipt) is
 * compared between the phases.
 *
 * A webhook is disabled after 5 consecutive failures (spec 6.3), which would
 * take the hanging one out of the picture within one timeout. Its owner keeps
 * re-enabling it through the update endpoint (`PATCH {active: true}`, which
 * resets the failure count), so it stays hanging for the whole phase: the
 * drill is about a dead endpoint that keeps getting traffic, as a fleet of
 * accounts always has somewhere.
 */
import assert from "node:assert/strict";
import { createTestDb } from "../_helpers/db.ts";
import { type Receiver, startReceiver } from "../_helpers/receiver.ts";
import type { TestDb } from "../_helpers/db.ts";
import {
  type Account,
  call,
  missingPairs,
  pairKey,
  percentiles,
  report,
  scaled,
  sleep,
  waitUntil,
} from "./_support.ts";
import { serviceEnv, startService } from "../_helpers/process.ts";
import { apiAt, createWebhook, newOperatorAccount } from "../_helpers/app.ts";
import { commitInboxEvents, type Committed } from "../_helpers/events.ts";

/** The spec's 10 s timeout at full scale; a shorter one keeps CI quick. */
const TIMEOUT_MS = scaled(3_000, 10_000);
const HANG_MS = scaled(5_000, 10_000);
/**
 * Events per second in both phases. The hanging webhook alone then needs
 * rate x timeout = ~100 attempt slots, more than an instance's default 64
 * (DELIVERY_CONCURRENCY): the drill tests isolation, not spare capacity, and
 * puts the same demand on the service at both scales (full: 10 events/s with
 * the spec's 10 s timeout, a moderate load for one account).
 */
const HANGING_DEMAND_SLOTS = 100;
const RATE = Math.ceil(HANGING_DEMAND_SLOTS / (TIMEOUT_MS / 1000));
const PHASE_MS = scaled(10_000, 30_000);
const REENABLE_EVERY_MS = 200;

/** Commits one event every 1/RATE s for PHASE_MS, on a fixed schedule (no drift). */
async function steadyStream(db: TestDb, accountId: string): Promise<Committed[]> {
  const out: Committed[] = [];
  const start = performance.now();
  const count = Math.round((RATE * PHASE_MS) / 1000);
  for (let i = 0; i < count; i++) {
    const due = start + (i * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    out.push(...await commitInboxEvents(db.sql, accountId, 1));
  }
  return out;
}

/** The healthy receiver's latency per event: first receipt minus commit. */
function latencies(receiver: Receiver, webhookId: string, events: Committed[]): number[] {
  const first = new Map<string, number>();
  for (const r of receiver.requests) {
    const key = pairKey(r.headers["x-webhook-id"] ?? "?", JSON.parse(r.body).id);
    if (!first.has(key)) first.set(key, r.receivedAt.getTime());
  }
  return events.map((e) => first.get(pairKey(webhookId, e.id))! - e.committedAt);
}

async function waitDelivered(receiver: Receiver, webhookId: string, events: Committed[]): Promise<void> {
  await waitUntil(
    () => missingPairs(receiver, [webhookId], events, 1).length === 0,
    120_000,
    () => `healthy receiver missing e.g. ${missingPairs(receiver, [webhookId], events).join(", ")}`,
  );
}

Deno.test("drill: a hanging receiver does not slow a healthy receiver's deliveries", async () => {
  const db = await createTestDb();
  const healthy = await startReceiver();
  const hanging = await startReceiver({ handler: { delayMs: HANG_MS } });
  const env = serviceEnv(db, TIMEOUT_MS === 10_000 ? {} : { DELIVERY_TIMEOUT_MS: String(TIMEOUT_MS) });
  const service = await startService(env);
  try {
    const api = apiAt(service.url);
    const account: Account = await newOperatorAccount(api);
    const healthyId = await createWebhook(api, account, healthy.url("/healthy"));

    // Warm-up (first connection, JIT) so that neither phase pays for it.
    await waitDelivered(healthy, healthyId, await commitInboxEvents(db.sql, account.id, 5, 1));

    const without = await steadyStream(db, account.id);
    await waitDelivered(healthy, healthyId, without);

    const hangingId = await createWebhook(api, account, hanging.url("/hang"));
    let reenabling = true;
    let reenabled = 0;
    const owner = (async () => {
      while (reenabling) {
        const r = await call(service.url, "PATCH", `/api/user-webhooks/${hangingId}`, {
          body: { active: true },
          cookie: account.cookie,
        });
        if (r.status !== 200) throw new Error(`re-enable: ${r.status} ${JSON.stringify(r.body)}`);
        reenabled++;
        await sleep(REENABLE_EVERY_MS);
      }
    })();
    let withHang: Committed[];
    try {
      withHang = await steadyStream(db, account.id);
      await waitDelivered(healthy, healthyId, withHang);
    } finally {
      reenabling = false;
      await owner;
    }
    const hangingRequests = hanging.requests.length;
    const hangingInFlight = (await db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM deliveries WHERE webhook_id = ${hangingId} AND status = 'in_flight'`)[0]!.n;

    const a = percentiles(latencies(healthy, healthyId, without));
    const b = percentiles(latencies(healthy, healthyId, withHang));
    // The bound: 2x the hang-free p95 plus 50 ms. On this shared 2-core machine
    // a healthy delivery takes a few to a few tens of ms and jitters with the
    // scheduler, and the hanging webhook's attempts add real work (claims, TLS
    // handshakes, failure records, retries) to the same process and database,
    // so some slowdown is expected and tolerated. What the drill is after is
    // head-of-line blocking, healthy attempts waiting for a slot held by a
    // hanging one: that costs up to the whole timeout (seconds), far past it.
    const bound = 2 * a.p95 + 50;
    report("hanging-receiver", {
      timeoutMs: TIMEOUT_MS,
      hangMs: HANG_MS,
      ratePerSecond: RATE,
      hangingDemandSlots: RATE * TIMEOUT_MS / 1000,
      phaseMs: PHASE_MS,
      eventsPerPhase: without.length,
      healthyWithoutHangMs: a,
      healthyWithHangMs: b,
      p95BoundMs: bound,
      hangingRequests,
      hangingInFlightAtEnd: hangingInFlight,
      reenabled,
    });
    assert.ok(hangingRequests > 0, "the hanging receiver was being called");
    assert.ok(
      b.p95 <= bound,
      `healthy p95 with a hanging receiver ${b.p95} ms > 2 x ${a.p95} ms + 50 ms (p50 ${a.p50} -> ${b.p50} ms)`,
    );
  } finally {
    // Answer the hanging requests at once so the service drains quickly.
    await hanging.close();
    assert.equal(await service.stop(), 0, "the service stops cleanly");
    await healthy.close();
    await db.close();
  }
});
