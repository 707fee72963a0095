/**
 * Short leases kept alive by a heartbeat (lease_keeper.ts): the lease on a
 * running attempt's account moves forward, so no other worker takes it over
 * however long it runs; a lease this worker lost, or could not renew in time,
 * stops the attempt before anyone else may send it; an exchange under way for
 * a while is marked in flight.
 */
import assert from "node:assert/strict";
import type { Sql } from "../../src/db/client.ts";
import * as repo from "../../src/deliveries/repo.ts";
import {
  HEARTBEAT_MS,
  LEASE_LOST,
  LEASE_MS,
  LeaseKeeper,
  MARK_AFTER_MS,
  STOP_MARGIN_MS,
} from "../../src/deliveries/lease_keeper.ts";
import { createWebhook } from "../_helpers/app.ts";
import { sleep, waitUntil } from "../_helpers/wait.ts";
import { claimExactly, type DeliveryFixture, deliveryFixture, emitInboxCreated } from "./_support.ts";

const WORKER = "worker-a";
const CAPS = { perEvent: 3, perWebhook: 16, perAccount: 32, slots: 64 };

/** One attempt claimed by WORKER with a lease of LEASE_MS from the fixture's clock. */
async function claimOne(f: DeliveryFixture): Promise<repo.ClaimedDelivery> {
  await createWebhook(f.app, f.user, f.receiver.url("/lease"));
  const eventId = await emitInboxCreated(f);
  const [row] = await f.db.sql<{ id: string }[]>`SELECT id FROM deliveries WHERE event_id = ${eventId}`;
  const [claimed] = await claimExactly(f, [row!.id], WORKER, new Date(f.clock.now().getTime() + LEASE_MS));
  return claimed!;
}

/** The lease on the attempt's account, in the database. */
async function leaseInDb(f: DeliveryFixture, id: string): Promise<number> {
  const [row] = await f.db.sql<{ leaseUntil: Date }[]>`
    SELECT o.lease_until FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
    JOIN delivery_owners o ON o.account_id = w.account_id WHERE d.id = ${id}`;
  return row!.leaseUntil.getTime();
}

async function rowOf(f: DeliveryFixture, id: string) {
  const [row] = await f.db.sql<
    { status: string; claimedBy: string | null; url: string | null; leaseUntil: Date | null }[]
  >`
    SELECT status, claimed_by, url, lease_until FROM deliveries WHERE id = ${id}`;
  return row!;
}

Deno.test("a running attempt's lease is renewed, so another worker never takes it over", async () => {
  const f = await deliveryFixture();
  const keeper = new LeaseKeeper({ sql: f.db.sql, clock: f.clock, worker: WORKER });
  try {
    const d = await claimOne(f);
    const first = d.leaseUntil.getTime();
    const stop = keeper.hold(d);
    // Three leases' worth of time passes while the attempt runs.
    for (let i = 0; i < 6; i++) {
      f.clock.advance(LEASE_MS / 2);
      const asked = f.clock.now().getTime() + LEASE_MS;
      await waitUntil(async () => await leaseInDb(f, d.id) >= asked, 5 * HEARTBEAT_MS, () => "lease not renewed");
      const other = await repo.claim(f.db.sql, f.clock.now(), 10, CAPS, "worker-b", new Date(asked), []);
      assert.equal(other.claimed.length, 0, "another worker claims nothing while the lease is renewed");
      assert.equal(await repo.requeueExpiredLeases(f.db.sql, f.clock.now()), 0, "nor does the sweep requeue it");
    }
    assert.ok(d.leaseUntil.getTime() >= first + 3 * LEASE_MS, "the attempt carries its renewed lease");
    assert.equal(stop.aborted, false);
  } finally {
    keeper.close();
    await f.close();
  }
});

Deno.test("an attempt whose lease went to another worker is stopped at the next beat", async () => {
  const f = await deliveryFixture();
  const keeper = new LeaseKeeper({ sql: f.db.sql, clock: f.clock, worker: WORKER });
  try {
    const d = await claimOne(f);
    const stop = keeper.hold(d);
    await sleep(2 * HEARTBEAT_MS);
    assert.equal(stop.aborted, false, "held while the account is this worker's");
    await f.db.sql`UPDATE delivery_owners SET worker = 'worker-b'`;
    await waitUntil(() => stop.aborted, 4 * HEARTBEAT_MS, () => "not stopped");
    assert.equal((stop.reason as Error).message, LEASE_LOST);
  } finally {
    keeper.close();
    await f.close();
  }
});

Deno.test("with the database away, an attempt is stopped before its lease runs out, not after", async () => {
  const f = await deliveryFixture();
  const away = ((..._args: unknown[]) => {
    throw new Error("connection refused");
  }) as unknown as Sql;
  const keeper = new LeaseKeeper({ sql: away, clock: f.clock, worker: WORKER });
  try {
    const d = await claimOne(f);
    const stop = keeper.hold(d);
    f.clock.advance(LEASE_MS - STOP_MARGIN_MS - 100);
    await sleep(2 * HEARTBEAT_MS);
    assert.equal(stop.aborted, false, "more than the margin is left: the attempt goes on");
    f.clock.advance(200);
    await waitUntil(() => stop.aborted, 4 * HEARTBEAT_MS, () => "not stopped");
    assert.ok(f.clock.now().getTime() < d.leaseUntil.getTime(), "stopped while the lease still held");
    assert.equal(await leaseInDb(f, d.id), d.leaseUntil.getTime(), "nothing renewed it");
  } finally {
    keeper.close();
    await f.close();
  }
});

Deno.test("an exchange under way for a while is marked in flight, with its URL and the lease; one that waits is not", async () => {
  const f = await deliveryFixture();
  const keeper = new LeaseKeeper({ sql: f.db.sql, clock: f.clock, worker: WORKER });
  try {
    const d = await claimOne(f);
    const stop = keeper.hold(d);
    await sleep(MARK_AFTER_MS + 2 * HEARTBEAT_MS);
    assert.equal((await rowOf(f, d.id)).status, "pending", "reserved, its exchange not begun: left pending");
    keeper.began(d.id);
    await waitUntil(
      async () => (await rowOf(f, d.id)).status === "in_flight",
      MARK_AFTER_MS + 4 * HEARTBEAT_MS,
      () => "not marked",
    );
    const row = await rowOf(f, d.id);
    assert.equal(row.claimedBy, WORKER);
    assert.equal(row.url, d.url, "the log shows where it is being sent");
    f.clock.advance(LEASE_MS / 2);
    const asked = f.clock.now().getTime() + LEASE_MS;
    await waitUntil(
      async () => (await rowOf(f, d.id)).leaseUntil!.getTime() >= asked,
      5 * HEARTBEAT_MS,
      () => "row's lease not renewed",
    );
    assert.equal(stop.aborted, false);
    // Recorded meanwhile (by this worker's result): the next beat finds the row no longer to mark, and stops nothing
    // that still runs; what the record wrote stays.
    await f.db.sql`UPDATE deliveries SET status = 'succeeded', lease_until = NULL WHERE id = ${d.id}`;
    await sleep(2 * HEARTBEAT_MS);
    assert.equal((await rowOf(f, d.id)).status, "succeeded", "a beat never marks a recorded attempt again");
  } finally {
    keeper.close();
    await f.close();
  }
});
