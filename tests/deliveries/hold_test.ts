/**
 * A receiver's `429` or `503` with `Retry-After` (seconds or an HTTP date)
 * holds every attempt of its webhook until then, at most 24 hours, over the
 * real path: the claim skips the webhook, its other attempts wait, the
 * account's other webhooks go on, and everything goes once the hold ends; the
 * retry schedule still applies where it is later; the queue sleeps through a
 * hold instead of claiming again and again, and wakes at its end.
 */
import assert from "node:assert/strict";
import { complete, send } from "../../src/deliveries/dispatcher.ts";
import { DeliveryQueue } from "../../src/deliveries/queue.ts";
import { systemClock } from "../../src/shared/clock.ts";
import { createWebhook } from "../_helpers/app.ts";
import { T0 } from "../_helpers/clock.ts";
import { startHarness } from "../_helpers/harness.ts";
import { interceptQueries } from "../_helpers/queries.ts";
import type { ReceiverReply } from "../_helpers/receiver.ts";
import { sleep } from "../_helpers/wait.ts";
import { type DeliveryFixture, deliveryFixture, deliveryLog, emitInboxCreated } from "./_support.ts";

/** The receiver answers `/held` with `first` once, then 200; every other path 200. */
function answerFirst(f: DeliveryFixture, first: ReceiverReply): void {
  let answered = false;
  f.receiver.respond((req) => {
    if (req.path !== "/held" || answered) return { status: 200 };
    answered = true;
    return first;
  });
}

/** The requests the receiver got on `path`, as the inbox ids of their events. */
function received(f: DeliveryFixture, path: string): string[] {
  return f.receiver.requests.filter((r) => r.path === path).map((r) => JSON.parse(r.body).data.inboxId);
}

async function holdOf(f: DeliveryFixture, webhookId: string): Promise<Date | null> {
  const [row] = await f.db.sql<{ holdUntil: Date | null }[]>`SELECT hold_until FROM webhooks WHERE id = ${webhookId}`;
  return row!.holdUntil;
}

/** Moves the clock to T0 + `ms`. */
function setClock(f: DeliveryFixture, ms: number): void {
  f.clock.advance(T0 + ms - f.clock.now().getTime());
}

Deno.test("429 with Retry-After in seconds holds every attempt of the webhook, not its neighbours', until then", async () => {
  const f = await deliveryFixture();
  try {
    answerFirst(f, { status: 429, headers: { "Retry-After": "120" } });
    const held = await createWebhook(f.app, f.user, f.receiver.url("/held"));
    await createWebhook(f.app, f.user, f.receiver.url("/other"));
    await emitInboxCreated(f, "inb_1");
    await f.app.deps.deliveries.queue.drain();
    assert.equal((await holdOf(f, held))?.getTime(), T0 + 120_000);

    await emitInboxCreated(f, "inb_2");
    await emitInboxCreated(f, "inb_3");
    await f.app.deps.deliveries.queue.drain();
    assert.deepEqual(received(f, "/held"), ["inb_1"], "nothing more to the held webhook");
    assert.deepEqual(received(f, "/other").sort(), ["inb_1", "inb_2", "inb_3"], "the other webhook goes on");
    const log = await deliveryLog(f, held);
    const pending = log.filter((d) => d.status === "pending");
    assert.equal(pending.length, 3, "the two new events and the retry");
    assert.ok(
      pending.every((d) => d.nextAttemptAt === new Date(T0 + 120_000).toISOString()),
      `the log tells when they go: ${JSON.stringify(pending.map((d) => d.nextAttemptAt))}`,
    );

    setClock(f, 119_999);
    assert.equal(await f.app.deps.deliveries.queue.runOnce(), 0, "still held");
    setClock(f, 120_000);
    await f.app.deps.deliveries.queue.drain();
    assert.deepEqual(received(f, "/held").sort(), ["inb_1", "inb_1", "inb_2", "inb_3"], "all of it once the hold ends");
    assert.ok((await deliveryLog(f, held)).every((d) => d.status !== "pending"));
  } finally {
    await f.close();
  }
});

Deno.test("503 with Retry-After as an HTTP date holds until that date, read on the service's clock", async () => {
  const f = await deliveryFixture();
  try {
    const until = new Date(T0 + 300_000);
    answerFirst(f, { status: 503, headers: { "Retry-After": until.toUTCString() } });
    const held = await createWebhook(f.app, f.user, f.receiver.url("/held"));
    await emitInboxCreated(f, "inb_1");
    await f.app.deps.deliveries.queue.drain();
    assert.equal((await holdOf(f, held))?.getTime(), until.getTime());
    await emitInboxCreated(f, "inb_2");
    setClock(f, 299_000);
    assert.equal(await f.app.deps.deliveries.queue.runOnce(), 0);
    setClock(f, 300_000);
    await f.app.deps.deliveries.queue.drain();
    assert.deepEqual(received(f, "/held").sort(), ["inb_1", "inb_1", "inb_2"]);
  } finally {
    await f.close();
  }
});

Deno.test("a hold is at most 24 hours; a Retry-After on another status moves only that event's retry", async () => {
  const f = await deliveryFixture();
  try {
    answerFirst(f, { status: 429, headers: { "Retry-After": String(3 * 86_400) } });
    const held = await createWebhook(f.app, f.user, f.receiver.url("/held"));
    await emitInboxCreated(f, "inb_1");
    await f.app.deps.deliveries.queue.drain();
    assert.equal((await holdOf(f, held))?.getTime(), T0 + 86_400_000, "capped at a day");

    // A 500 with Retry-After: the event's own retry waits for it; the webhook is not held.
    let first = true;
    f.receiver.respond((req) => {
      if (req.path !== "/five" || !first) return { status: 200 };
      first = false;
      return { status: 500, headers: { "Retry-After": "600" } };
    });
    const five = await createWebhook(f.app, f.user, f.receiver.url("/five"));
    await emitInboxCreated(f, "inb_2");
    await f.app.deps.deliveries.queue.drain();
    assert.equal(await holdOf(f, five), null);
    await emitInboxCreated(f, "inb_3");
    await f.app.deps.deliveries.queue.drain();
    assert.deepEqual(received(f, "/five"), ["inb_2", "inb_3"]);
    const retry = (await deliveryLog(f, five)).find((d) => d.status === "pending");
    assert.equal(retry?.nextAttemptAt, new Date(f.clock.now().getTime() + 600_000).toISOString());
  } finally {
    await f.close();
  }
});

Deno.test("the retry schedule still applies when it is later than the hold", async () => {
  const f = await deliveryFixture();
  try {
    answerFirst(f, { status: 429, headers: { "Retry-After": "1" } });
    const held = await createWebhook(f.app, f.user, f.receiver.url("/held"));
    await emitInboxCreated(f, "inb_1");
    await f.app.deps.deliveries.queue.drain();
    assert.equal((await holdOf(f, held))?.getTime(), T0 + 1_000);
    await emitInboxCreated(f, "inb_2");
    setClock(f, 1_000);
    await f.app.deps.deliveries.queue.drain();
    assert.deepEqual(received(f, "/held"), ["inb_1", "inb_2"], "the others go once the hold ends");
    setClock(f, 9_999);
    await f.app.deps.deliveries.queue.drain();
    assert.deepEqual(received(f, "/held"), ["inb_1", "inb_2"], "the refused event waits for its retry (+10 s)");
    setClock(f, 10_000);
    await f.app.deps.deliveries.queue.drain();
    assert.deepEqual(received(f, "/held"), ["inb_1", "inb_2", "inb_1"]);
  } finally {
    await f.close();
  }
});

Deno.test("a running queue sleeps through a hold, claiming nothing meanwhile, and sends at its end", async () => {
  // The wall clock and a queue of this test's own, whose queries are counted.
  const h = await startHarness({ receiver: true, user: "pro", systemClock: true });
  try {
    let refusedAt = 0;
    h.receiver.respond((_req, index) => {
      if (index > 0) return { status: 200 };
      refusedAt = Date.now();
      return { status: 429, headers: { "Retry-After": "1" } };
    });
    await createWebhook(h.app, h.user, h.receiver.url("/held"));
    const db = interceptQueries(h.app.deps.sql, () => undefined);
    const dispatcher = h.app.deps.deliveries.dispatcher;
    const queue = new DeliveryQueue({
      sql: db.sql,
      clock: systemClock,
      worker: dispatcher.worker,
      globalConcurrency: 8,
      caps: { perEvent: 3, perWebhook: 16, perAccount: 32, slots: 64 },
      send: (d, stop) => send(dispatcher, d, stop),
      complete: (d, verdict) => complete(dispatcher, d, verdict),
      databaseOutage: { absorb: () => false },
    });
    const emit = async (inboxId: string) => {
      const now = new Date();
      await h.app.deps.outbox.transaction((_tx, e) =>
        e(
          h.user.id,
          "inbox.created",
          { inboxId, address: `${inboxId}@inbox.localhost`, expiresAt: now.toISOString() },
          now,
        )
      );
      queue.wake();
    };
    queue.start();
    try {
      await emit("inb_1");
      await h.receiver.waitFor(1);
      await sleep(100); // the refusal recorded, with its hold
      await emit("inb_2");
      await sleep(100);
      const before = db.queries();
      await sleep(500);
      const during = db.queries() - before;
      assert.ok(during <= 4, `${during} queries in half a second of the hold: the queue sleeps`);
      const [, second] = await h.receiver.waitFor(2, 5_000);
      const waited = second!.receivedAt.getTime() - refusedAt;
      assert.equal(JSON.parse(second!.body).data.inboxId, "inb_2");
      assert.ok(waited >= 900 && waited < 2_500, `sent ${waited} ms after the 429: at the hold's end`);
    } finally {
      await queue.stop(1_000);
    }
  } finally {
    await h.close();
  }
});
