/**
 * The floor of the claims over the real queue and database: a claim scans
 * the due order from where the last one found the oldest due attempt (less
 * a margin), past the dead entries that finished attempts leave until a
 * VACUUM, and still finds an attempt that commits late, one put back in the
 * queue when a lease ran out, and, at the periodic scan from the start, one
 * put back before the floor any other way.
 */
import assert from "node:assert/strict";
import { createWebhook } from "../_helpers/app.ts";
import { waitUntil } from "../_helpers/wait.ts";
import type { DeliveryQueue } from "../../src/deliveries/queue.ts";
import * as repo from "../../src/deliveries/repo.ts";
import { type DeliveryFixture, deliveryFixture, emitInboxCreated, testQueue } from "./_support.ts";

/** A started queue that notes each attempt's id and event and records nothing, one webhook, one event sent. */
interface AfterFirstClaim {
  f: DeliveryFixture;
  queue: DeliveryQueue<boolean>;
  /** Ids and events of the attempts sent. */
  sent: Set<string>;
  webhook: string;
  /** The event whose attempt was sent: it stays pending (nothing is recorded), so the floor stays at it. */
  event: string;
}

/**
 * Runs `body` once the first event's attempt went out, its claim having set
 * the floor; `floorRefreshMs`: how often a claim scans from the start.
 */
async function afterFirstClaim(floorRefreshMs: number, body: (s: AfterFirstClaim) => Promise<void>): Promise<void> {
  const f = await deliveryFixture();
  const sent = new Set<string>();
  const queue = testQueue(f, {
    worker: "floor",
    caps: { perEvent: 3, perWebhook: 8, perAccount: 8, slots: 8 },
    floorRefreshMs,
    send: (d) => {
      sent.add(d.id).add(d.eventId);
      return Promise.resolve(true);
    },
    complete: () => Promise.resolve(),
  });
  try {
    const webhook = await createWebhook(f.app, f.user, f.receiver.url("/h"));
    queue.start();
    const event = await emitInboxCreated(f);
    await sentSoon({ queue, sent }, event);
    await body({ f, queue, sent, webhook, event });
  } finally {
    await queue.stop(1_000);
    await f.close();
  }
}

/** Wakes the queue until `id` (an attempt or an event) was sent, for up to 5 s. */
async function sentSoon(s: Pick<AfterFirstClaim, "queue" | "sent">, id: string): Promise<void> {
  await waitUntil(
    () => {
      s.queue.wake();
      return s.sent.has(id);
    },
    5_000,
    () => `${id} was not sent`,
  );
}

/**
 * A second attempt of the event, `id`, due an hour ago: pending, or in
 * flight under a lease of a dead instance that ran out a minute ago.
 */
async function secondAttempt(s: AfterFirstClaim, id: string, status: "pending" | "in_flight"): Promise<void> {
  const now = s.f.clock.now().getTime();
  const lease = status === "in_flight" ? new Date(now - 60_000) : null;
  await s.f.db.sql`
    INSERT INTO deliveries (id, event_id, webhook_id, attempt, status, run_at, created_at, claimed_by, lease_until)
    VALUES (${id}, ${s.event}, ${s.webhook}, 2, ${status}, ${new Date(now - 3_600_000)}, ${new Date(now)},
      ${lease ? "dead" : null}, ${lease})`;
}

Deno.test("an attempt committed after a claim, due a moment before that claim's floor, is claimed at once", async () => {
  // No scan from the start while the test runs: only the margin can find it.
  await afterFirstClaim(600_000, async (s) => {
    // Emitted 2 s before the first (its attempt due then), committed after the first was claimed: a long
    // transaction. The clock does not go back.
    const late = await emitInboxCreated(s.f, "inb_late", s.f.user.id, new Date(s.f.clock.now().getTime() - 2_000));
    await sentSoon(s, late);
  });
});

Deno.test("an attempt put back in the queue when its lease ran out is claimed, however far before the floor", async () => {
  await afterFirstClaim(600_000, async (s) => {
    await secondAttempt(s, "dlv_lost", "in_flight");
    // The next claim looks for expired leases (at most every 500 ms of the queue's clock), puts it back, and
    // scans from the start of the due order.
    s.f.clock.advance(1_000);
    await sentSoon(s, "dlv_lost");
  });
});

Deno.test("an attempt put back before the floor some other way is claimed at the next scan from the start", async () => {
  await afterFirstClaim(300, async (s) => {
    // Pending (as another instance's shutdown leaves the attempts it had marked), with no NOTIFY.
    await secondAttempt(s, "dlv_back", "pending");
    await sentSoon(s, "dlv_back");
  });
});

Deno.test("a claim from the floor reads the due order from there, past the entries finished attempts left", async () => {
  const f = await deliveryFixture();
  const conn = await f.db.sql.reserve();
  try {
    // No VACUUM while the test runs, wherever it runs: the finished attempts' entries stay.
    await f.db.sql`ALTER TABLE deliveries SET (autovacuum_enabled = false)`;
    const webhook = await createWebhook(f.app, f.user, f.receiver.url("/h"));
    const event = await emitInboxCreated(f);
    // 20,000 attempts due before it, all sent since: dead entries at the head of the due order.
    await f.db.sql`
      INSERT INTO deliveries (id, event_id, webhook_id, attempt, status, run_at, created_at)
      SELECT 'dlv_old' || lpad(g::text, 6, '0'), ${event}, ${webhook}, 2, 'pending',
        ${f.clock.now()}::timestamptz - interval '1 hour' + g * interval '1 ms', ${f.clock.now()}
      FROM generate_series(1, 20000) g`;
    await f.db.sql`UPDATE deliveries SET status = 'succeeded' WHERE id LIKE 'dlv_old%'`;
    const caps = { perEvent: 12, perWebhook: 64, perAccount: 128, slots: 256 };
    /** Index blocks of the due order a claim read (rolled back), and the floor it gave. */
    const claimFrom = async (floor?: repo.DueFloor) => {
      const blocks = async () =>
        (await conn<{ n: number }[]>`
          SELECT pg_stat_get_xact_blocks_fetched(indexrelid)::int AS n FROM pg_stat_user_indexes
          WHERE schemaname = ${f.db.schema} AND indexrelname = 'deliveries_due_order_idx'`)[0]!.n;
      await conn`BEGIN`;
      try {
        const before = await blocks();
        const now = f.clock.now();
        const claim = await repo.claim(conn, now, 48, caps, "floor", new Date(now.getTime() + 60_000), [], [], floor);
        assert.equal(claim.claimed.length, 1, "the one attempt due");
        return { blocks: await blocks() - before, floor: claim.floor };
      } finally {
        await conn`ROLLBACK`;
      }
    };
    const fromStart = await claimFrom();
    const [due] = await f.db.sql<{ id: string; runAt: Date }[]>`
      SELECT id, run_at FROM deliveries WHERE event_id = ${event} AND attempt = 1`;
    assert.deepEqual(fromStart.floor, { runAt: due!.runAt, id: due!.id }, "the floor is the oldest attempt due");
    const fromFloor = await claimFrom({ runAt: new Date(due!.runAt.getTime() - 5_000), id: "" });
    assert.ok(
      fromFloor.blocks * 10 < fromStart.blocks,
      `from the floor ${fromFloor.blocks} blocks of the due order's index, from the start ${fromStart.blocks}`,
    );
  } finally {
    conn.release();
    await f.close();
  }
});
