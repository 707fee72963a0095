/**
 * Concurrency over the real queue: the per-event cap of 3 (spec 6.3: "3 per trigger") and an account's
 * cap hold across two instances (measured at the receiver), a slot is free once its exchange ends, and a
 * hanging receiver does not hold up a healthy one.
 */
import assert from "node:assert/strict";
import { createWebhook, newUser } from "../_helpers/app.ts";
import type { DeliveryQueue } from "../../src/deliveries/queue.ts";
import { startReceiver } from "../_helpers/receiver.ts";
import { waitUntil } from "../_helpers/wait.ts";
import type { ClaimedDelivery } from "../../src/deliveries/repo.ts";
import { type DeliveryFixture, deliveryFixture, emitInboxCreated, testQueue } from "./_support.ts";

Deno.test("10 webhooks on one event, a slow receiver, two instances: never more than 3 in flight", async () => {
  const f = await deliveryFixture({ startDeliveries: true });
  // A second instance on the same database competes for the same deliveries.
  // It hears the NOTIFY of the first instance's commit, as a real second instance does.
  const second = await f.startInstance({ startDeliveries: true, listen: true });
  try {
    let active = 0;
    let peak = 0;
    f.receiver.respond(() => {
      active++;
      peak = Math.max(peak, active);
      setTimeout(() => active--, 300);
      return { delayMs: 300 };
    });
    for (let i = 0; i < 10; i++) await createWebhook(f.app, f.user, f.receiver.url(`/h${i}`));
    await emitInboxCreated(f);
    const requests = await f.receiver.waitFor(10, 20_000);
    assert.equal(new Set(requests.map((r) => r.path)).size, 10, "every webhook got the event once");
    assert.ok(peak <= 3, `peak in flight was ${peak}`);
    assert.equal(peak, 3, "the cap is used, not just respected: three at a time");
  } finally {
    await second.close();
    await f.close();
  }
});

Deno.test("one account, a hanging receiver, two instances: its exchanges never exceed its cap over both", async () => {
  const env = { DELIVERY_CONCURRENCY_PER_ACCOUNT: "4", DELIVERY_TIMEOUT_MS: "10000" };
  const f = await deliveryFixture({ startDeliveries: true, env });
  const second = await f.startInstance({ startDeliveries: true, listen: true, env });
  const hanging = await startReceiver({ handler: { delayMs: 600_000 } });
  try {
    // 10 webhooks: neither the per-event nor the per-webhook cap binds before the account's 4.
    for (let i = 0; i < 10; i++) await createWebhook(f.app, f.user, hanging.url(`/h${i}`));
    for (let i = 0; i < 5; i++) await emitInboxCreated(f);
    await hanging.waitFor(4, 5_000);
    // Both instances hear every commit and claim again on their timers meanwhile.
    await emitInboxCreated(f);
    await new Promise((r) => setTimeout(r, 600));
    assert.equal(hanging.requests.length, 4, "4 exchanges at once over both instances, never more");
    const [row] = await f.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM delivery_owners`;
    assert.equal(row!.n, 1, "one instance holds the account");
  } finally {
    await hanging.close();
    await second.close();
    await f.close();
  }
});

/** A queue on the fixture's database that sends one exchange at a time to a webhook (its cap of 1). */
function oneExchangeAtATime(
  f: DeliveryFixture,
  worker: string,
  send: (d: ClaimedDelivery) => Promise<boolean>,
  complete: () => Promise<unknown>,
): DeliveryQueue<boolean> {
  return testQueue(f, { worker, caps: { perEvent: 3, perWebhook: 1, perAccount: 8, slots: 8 }, send, complete });
}

Deno.test("a slot is free once its exchange ends: the next starts while the result is still being recorded", async () => {
  const f = await deliveryFixture();
  let recordable!: () => void;
  const gate = new Promise<void>((r) => recordable = r);
  const sent: string[] = [];
  // No result commits until the gate opens: every row stays pending in the database, held by the queue.
  const queue = oneExchangeAtATime(f, "slots", (d) => {
    sent.push(d.id);
    return Promise.resolve(true);
  }, () => gate);
  try {
    await createWebhook(f.app, f.user, f.receiver.url("/one"));
    for (let i = 0; i < 3; i++) await emitInboxCreated(f);
    queue.start();
    await waitUntil(() => sent.length === 3, 5_000, () => `${sent.length} of 3 sent`);
    const [row] = await f.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM deliveries WHERE status = 'pending'`;
    assert.equal(row!.n, 3, "the three results are still unrecorded");
    assert.equal(sent.length, 3, "and none of them went twice: the queue passes over those it holds");
    recordable();
    await queue.stop(1_000);
    const [held] = await f.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM delivery_owners`;
    assert.equal(held!.n, 0, "a stopped instance lets go of its accounts: another takes them at once");
  } finally {
    recordable();
    await queue.stop(1_000);
    await f.close();
  }
});

Deno.test("an account at its share leaves the slots to another's attempts reserved behind its own", async () => {
  const f = await deliveryFixture();
  const other = await newUser(f.app, "pro");
  const sent: string[] = [];
  let answer!: (ok: boolean) => void;
  const hanging = new Promise<boolean>((r) => answer = r);
  const queue = testQueue(f, {
    worker: "shares",
    // Beside one other account, each holds at most 2 exchanges.
    caps: { perEvent: 3, perWebhook: 8, perAccount: 2, slots: 8 },
    send: (d) => {
      sent.push(d.accountId);
      return hanging;
    },
    complete: () => Promise.resolve(),
  });
  try {
    await createWebhook(f.app, f.user, f.receiver.url("/first"));
    await createWebhook(f.app, other, f.receiver.url("/second"));
    // The first account's four attempts come first in the claim's order, the other's one after them.
    for (let i = 0; i < 4; i++) await emitInboxCreated(f);
    f.clock.advance(1_000);
    await emitInboxCreated(f, undefined, other.id);
    // One claim, no timer to claim again (the queue is not started): it reserves all five and starts what the
    // caps let go at once. The first account's share is full after two of its own; no exchange ends.
    const once = queue.runOnce();
    await waitUntil(() => sent.length === 3, 5_000, () => `${sent.length} of 3 sent: ${sent.join(", ")}`);
    assert.deepEqual(sent.toSorted(), [f.user.id, f.user.id, other.id].toSorted());
    answer(true);
    assert.equal(await once, 5);
  } finally {
    answer(true);
    await queue.stop(1_000);
    await f.close();
  }
});

Deno.test("a reserved attempt that waited over a second goes back to the queue and out with the webhook's new URL", async () => {
  const f = await deliveryFixture();
  const urls: string[] = [];
  // The second attempt waits, reserved, behind the first.
  const queue = oneExchangeAtATime(f, "stale", async (d) => {
    urls.push(d.url);
    if (urls.length === 1) await new Promise((r) => setTimeout(r, 1_500));
    return true;
  }, () => Promise.resolve());
  try {
    const id = await createWebhook(f.app, f.user, f.receiver.url("/old"));
    for (let i = 0; i < 2; i++) await emitInboxCreated(f);
    queue.start();
    await waitUntil(() => urls.length === 1, 5_000, () => "the first attempt not sent");
    await f.db.sql`UPDATE webhooks SET url = ${f.receiver.url("/new")} WHERE id = ${id}`;
    // The fake completion records nothing, so the attempts go out again and again: the second is the one that matters.
    await waitUntil(() => urls.length >= 2, 5_000, () => "the second attempt not sent");
    assert.ok(urls[1]!.endsWith("/new"), `the second went to ${urls[1]}, read when it was reserved`);
  } finally {
    await queue.stop(1_000);
    await f.close();
  }
});

Deno.test("a 429 with Retry-After sends the webhook's reserved attempts back to the queue: none goes before the hold ends", async () => {
  // The account's share is 2: two exchanges at once, two more attempts reserved behind them.
  const f = await deliveryFixture({ startDeliveries: true, env: { DELIVERY_CONCURRENCY_PER_ACCOUNT: "2" } });
  try {
    f.receiver.respond({ status: 429, headers: { "Retry-After": "60" }, delayMs: 300 });
    const id = await createWebhook(f.app, f.user, f.receiver.url("/busy"));
    for (let i = 0; i < 6; i++) await emitInboxCreated(f);
    await f.receiver.waitFor(2, 5_000);
    await new Promise((r) => setTimeout(r, 1_000));
    assert.equal(f.receiver.requests.length, 2, "nothing more went to the held webhook");
    const [hook] = await f.db.sql<{ holdUntil: Date | null }[]>`SELECT hold_until FROM webhooks WHERE id = ${id}`;
    assert.notEqual(hook!.holdUntil, null, "the webhook is held");
    const rows = await f.db.sql<{ status: string; n: number }[]>`
      SELECT status, count(*)::int AS n FROM deliveries WHERE webhook_id = ${id} GROUP BY status ORDER BY status`;
    // The 2 sent failed, their retries queued; the others, reserved ones included, wait in the queue unsent.
    assert.deepEqual(rows.map((r) => [r.status, r.n]), [["failed", 2], ["pending", 6]]);
  } finally {
    await f.close();
  }
});

Deno.test("a receiver that hangs does not delay deliveries to a healthy one", async () => {
  const f = await deliveryFixture({ startDeliveries: true, env: { DELIVERY_TIMEOUT_MS: "3000" } });
  try {
    f.receiver.respond((req) => req.path === "/hang" ? { delayMs: 10_000 } : { status: 200 });
    const hanging = await createWebhook(f.app, f.user, f.receiver.url("/hang"));
    await createWebhook(f.app, f.user, f.receiver.url("/healthy"));
    // Five events, each to both webhooks: the hanging ones take a slot each.
    for (let i = 0; i < 5; i++) await emitInboxCreated(f);
    const healthyDone = async () => {
      while (f.receiver.requests.filter((r) => r.path === "/healthy").length < 5) {
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    await healthyDone();
    // Every healthy delivery arrived while the hanging attempts were still open.
    const failedHanging = await f.db.sql`
      SELECT count(*)::int AS n FROM deliveries WHERE webhook_id = ${hanging} AND status = 'failed'`;
    assert.equal(failedHanging[0]!.n, 0, "no hanging attempt had finished yet");
    const healthyLog = await f.db.sql`
      SELECT count(*)::int AS n FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
      WHERE w.url LIKE '%/healthy' AND d.status = 'succeeded'`;
    // Recording follows the receiver's answer by a few milliseconds.
    const deadline = Date.now() + 5_000;
    let recorded = healthyLog[0]!.n;
    while (recorded < 5 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
      recorded = (await f.db.sql`
        SELECT count(*)::int AS n FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
        WHERE w.url LIKE '%/healthy' AND d.status = 'succeeded'`)[0]!.n;
    }
    assert.equal(recorded, 5);
  } finally {
    await f.close();
  }
});
