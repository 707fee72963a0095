/**
 * The claim, statement by statement on PostgreSQL: the caps hold within one
 * claim and against what is already in flight, and an attempt whose webhook
 * was disabled after it was queued is cancelled, never sent.
 */
import assert from "node:assert/strict";
import * as repo from "../../src/deliveries/repo.ts";
import { createWebhook } from "../_helpers/app.ts";
import { type DeliveryFixture, deliveryFixture, emitInboxCreated } from "./_support.ts";

const CAPS = { perEvent: 3, perWebhook: 16, perAccount: 64, slots: 128 };

/** One claim as the queue makes it; returns the claimed ids. */
async function claim(f: DeliveryFixture, worker = "w1", limit = 64): Promise<string[]> {
  const now = f.clock.now();
  const { claimed } = await repo.claim(f.db.sql, now, limit, CAPS, worker, new Date(now.getTime() + 60_000));
  return claimed.map((d) => d.id);
}

async function inFlight(f: DeliveryFixture): Promise<{ eventId: string; webhookId: string }[]> {
  return await f.db.sql`SELECT event_id, webhook_id FROM deliveries WHERE status = 'in_flight'`;
}

Deno.test("one event to 10 webhooks: a claim takes 3, the next none until one finishes", async () => {
  const f = await deliveryFixture();
  try {
    for (let i = 0; i < 10; i++) await createWebhook(f.app, f.user, f.receiver.url(`/w${i}`));
    await emitInboxCreated(f);
    assert.equal((await claim(f)).length, 3);
    assert.equal((await claim(f, "w2")).length, 0, "another worker gets none while 3 are in flight");
    const [one] = await f.db.sql<{ id: string }[]>`SELECT id FROM deliveries WHERE status = 'in_flight' LIMIT 1`;
    await f.db.sql`UPDATE deliveries SET status = 'succeeded', lease_until = NULL WHERE id = ${one!.id}`;
    assert.equal((await claim(f, "w2")).length, 1, "one finished, one more may go");
    assert.equal((await inFlight(f)).length, 3);
  } finally {
    await f.close();
  }
});

Deno.test("20 events to one webhook: a claim takes 16, and an expired lease no longer counts", async () => {
  const f = await deliveryFixture();
  try {
    await createWebhook(f.app, f.user, f.receiver.url("/one"));
    for (let i = 0; i < 20; i++) await emitInboxCreated(f);
    assert.equal((await claim(f)).length, 16);
    assert.equal((await claim(f)).length, 0, "the webhook is at its cap");
    // A worker died holding 5 of them: once their lease ran out they stop counting.
    await f.db.sql`
      UPDATE deliveries SET lease_until = ${new Date(f.clock.now().getTime() - 1)}
      WHERE id IN (SELECT id FROM deliveries WHERE status = 'in_flight' ORDER BY id LIMIT 5)`;
    assert.equal((await claim(f)).length, 4, "the 4 left pending fit beside the 11 live leases");
  } finally {
    await f.close();
  }
});

Deno.test("both caps in one claim: per webhook first, then per event", async () => {
  const f = await deliveryFixture();
  try {
    const hooks: string[] = [];
    for (let i = 0; i < 4; i++) hooks.push(await createWebhook(f.app, f.user, f.receiver.url(`/c${i}`)));
    for (let i = 0; i < 6; i++) await emitInboxCreated(f);
    const ids = await claim(f);
    const rows = await inFlight(f);
    assert.equal(ids.length, rows.length);
    const perEvent = Map.groupBy(rows, (r) => r.eventId);
    const perWebhook = Map.groupBy(rows, (r) => r.webhookId);
    assert.ok([...perEvent.values()].every((r) => r.length <= 3), "never more than 3 of one event");
    assert.ok([...perWebhook.values()].every((r) => r.length <= 16), "never more than 16 of one webhook");
    assert.equal(ids.length, 18, "6 events x 3: every event as far as its cap allows");
  } finally {
    await f.close();
  }
});

Deno.test("an attempt whose webhook was disabled after it was queued is cancelled, not sent", async () => {
  const f = await deliveryFixture();
  try {
    const id = await createWebhook(f.app, f.user, f.receiver.url("/off"));
    const eventId = await emitInboxCreated(f);
    await f.db.sql`UPDATE webhooks SET active = false WHERE id = ${id}`;
    assert.equal(await f.app.deps.deliveries.queue.runOnce(), 0);
    const [row] = await f.db.sql<{ status: string; finishedAt: Date | null }[]>`
      SELECT status, finished_at FROM deliveries WHERE event_id = ${eventId}`;
    assert.equal(row!.status, "cancelled");
    assert.notEqual(row!.finishedAt, null);
    assert.equal(f.receiver.requests.length, 0, "nothing reached the receiver");
  } finally {
    await f.close();
  }
});
