/**
 * Fairness between tenants over the real queue: account A's receivers never
 * answer, and its deliveries queue up behind them; account B's next delivery
 * must still go out at once, not after A's attempts time out. Before the
 * claim left out events, webhooks and accounts at their cap, B waited for the
 * delivery timeout (about 10 s with 80 hanging deliveries queued, 20 s with
 * 160): the claim kept taking A's held-back rows at the head of the queue.
 */
import assert from "node:assert/strict";
import { createWebhook, newUser } from "../_helpers/app.ts";
import { type Receiver, startReceiver } from "../_helpers/receiver.ts";
import { createInbox } from "../inboxes/_support.ts";
import { deliveryFixture } from "./_support.ts";

const TIMEOUT_MS = 10_000;

/** Waits until the receiver has `n` requests, up to `ms`; false when it did not. */
async function reached(receiver: Receiver, n: number, ms: number): Promise<boolean> {
  return await receiver.waitFor(n, ms).then(() => true, () => false);
}

for (const inboxes of [8, 80]) {
  const queued = inboxes * 10;
  Deno.test(`with ${queued} of one tenant's deliveries hanging or queued, another tenant's goes out at once`, async () => {
    const f = await deliveryFixture({ startDeliveries: true, env: { DELIVERY_TIMEOUT_MS: String(TIMEOUT_MS) } });
    const hanging = await startReceiver({ handler: { delayMs: 600_000 } });
    try {
      // Tenant A: 10 webhooks whose receivers never answer.
      for (let i = 0; i < 10; i++) await createWebhook(f.app, f.user, hanging.url(`/a${i}`));
      for (let i = 0; i < inboxes; i++) await createInbox(f.app, f.user);
      // Every slot A may have is taken: 3 per event, at most the per-account cap.
      const expectedInFlight = Math.min(inboxes * 3, 32);
      assert.ok(await reached(hanging, expectedInFlight, 5_000), `A got ${hanging.requests.length} in flight`);

      // Tenant B: one webhook to a receiver that answers.
      const b = await newUser(f.app, "pro");
      await createWebhook(f.app, b, f.receiver.url("/b"));
      // B's event comes later than every one of A's (the test clock stands still otherwise).
      f.clock.advance(1_000);
      const started = performance.now();
      await createInbox(f.app, b);
      // Before any of A's attempts can time out (10 s), B's delivery is there.
      const inTime = await reached(f.receiver, 1, TIMEOUT_MS / 2);
      const delayMs = Math.round(performance.now() - started);
      console.log(`tenant B's delivery with ${queued} of A's queued: ${inTime ? `${delayMs} ms` : "not within 5 s"}`);
      assert.ok(inTime, `B's delivery waited behind A's hanging receivers (${delayMs} ms)`);
      assert.equal(hanging.requests.length, expectedInFlight, "A never held more than its share");
      const flying = await f.db.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
        WHERE d.status = 'in_flight' AND w.account_id = ${f.user.id}`;
      assert.ok(flying[0]!.n <= 32, `A has ${flying[0]!.n} in flight, over its cap of 32`);
    } finally {
      await hanging.close();
      await f.close();
    }
  });
}
