/**
 * The queue's next wake-up (repo.nextWakeAt) reads the first pending attempt
 * in due order, whatever the statistics say: with those of a queue table
 * (always behind), computing min(run_at) read every pending attempt through
 * another index, at every idle tick of the queue.
 */
import assert from "node:assert/strict";
import * as repo from "../../src/deliveries/repo.ts";
import { createWebhook } from "../_helpers/app.ts";
import { commitInboxEvents } from "../_helpers/events.ts";
import { deliveryFixture, pendingIndexReads } from "./_support.ts";

const EVENTS = 1_000;

Deno.test("the next wake-up reads one pending attempt, not all of them, with statistics behind", async () => {
  const f = await deliveryFixture();
  try {
    for (let i = 0; i < 3; i++) await createWebhook(f.app, f.user, f.receiver.url(`/wake${i}`));
    // Statistics taken while the table held only finished attempts, then a backlog queued an hour ahead.
    await commitInboxEvents(f.db.sql, f.user.id, EVENTS, 100, f.clock.now());
    await f.db.sql`UPDATE deliveries SET status = 'succeeded', finished_at = now()`;
    await f.db.sql`ANALYZE deliveries`;
    await commitInboxEvents(f.db.sql, f.user.id, EVENTS, 100, new Date(f.clock.now().getTime() + 3_600_000));
    // The first look passes over the index entries the finished attempts left behind (and marks them dead).
    await repo.nextWakeAt(f.db.sql);
    const { next, read } = await f.db.sql.begin(async (tx) => {
      const before = await pendingIndexReads(tx, f.db.schema);
      const next = await repo.nextWakeAt(tx);
      return { next, read: (await pendingIndexReads(tx, f.db.schema)) - before };
    });
    assert.ok(read <= 10, `the next wake-up read ${read} index entries of ${3 * EVENTS} pending attempts`);
    const [earliest] = await f.db.sql<{ at: Date }[]>`
      SELECT min(run_at) AS at FROM deliveries WHERE status = 'pending'`;
    assert.equal(next?.getTime(), earliest!.at.getTime(), "the earliest due time");
  } finally {
    await f.close();
  }
});
