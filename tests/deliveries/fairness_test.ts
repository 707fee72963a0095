/**
 * Fairness between tenants over the real queue: account A's receivers never
 * answer, and its deliveries queue up behind them; account B's next delivery
 * must still go out at once, not after A's attempts time out. Before the
 * claim left out events, webhooks and accounts at their cap, B waited for the
 * delivery timeout (about 10 s with 80 hanging deliveries queued, 20 s with
 * 160): the claim kept taking A's held-back rows at the head of the queue.
 */
import assert from "node:assert/strict";
import * as repo from "../../src/deliveries/repo.ts";
import { createWebhook, newUser } from "../_helpers/app.ts";
import { type Receiver, startReceiver } from "../_helpers/receiver.ts";
import { sleep, waitUntil } from "../_helpers/wait.ts";
import { createInbox } from "../inboxes/_support.ts";
import { type DeliveryFixture, deliveryFixture } from "./_support.ts";

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
      // Its hanging exchanges are marked in flight by the heartbeat (the log shows them); those reserved behind
      // them, not sent, stay pending.
      await waitUntil(
        async () => await heldBy(f, f.user.id) === expectedInFlight,
        3_000,
        async () =>
          `A has ${await heldBy(f, f.user.id)} in flight in the database, not its ${expectedInFlight} exchanges`,
      );
    } finally {
      await hanging.close();
      await f.close();
    }
  });
}

/** Commits `n` inbox.created events of the account in one transaction of the app's outbox (which wakes its queue). */
async function emitMany(f: DeliveryFixture, accountId: string, n: number): Promise<void> {
  const now = f.clock.now();
  await f.app.deps.outbox.transaction(async (_tx, emit) => {
    for (let i = 0; i < n; i++) {
      await emit(accountId, "inbox.created", {
        inboxId: `inb_${i}`,
        address: `x${i}@inbox.localhost`,
        expiresAt: now.toISOString(),
      }, now);
    }
  });
}

/** In-flight attempts per account in the database (exchanges under way for a while, marked by the heartbeat). */
async function heldBy(f: DeliveryFixture, accountId: string): Promise<number> {
  const [row] = await f.db.sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
    WHERE d.status = 'in_flight' AND w.account_id = ${accountId}`;
  return row!.n;
}

Deno.test("three tenants hanging: each gets half of what the others leave, and a fourth tenant's delivery goes out at once", async () => {
  // 64 slots (DELIVERY_CONCURRENCY). With a fixed per-account cap of 32, the
  // second hanging tenant took the other 32 and the third tenant, and every
  // later one, waited for the delivery timeout.
  const f = await deliveryFixture({ startDeliveries: true, env: { DELIVERY_TIMEOUT_MS: String(TIMEOUT_MS) } });
  const hanging = await startReceiver({ handler: { delayMs: 600_000 } });
  try {
    const expected = [32, 16, 8]; // half of 64, of 64 - 32, of 64 - 48
    const tenants = [f.user, await newUser(f.app, "pro"), await newUser(f.app, "pro")];
    let sent = 0;
    for (const [i, tenant] of tenants.entries()) {
      for (let w = 0; w < 10; w++) await createWebhook(f.app, tenant, hanging.url(`/t${i}/${w}`));
      // Each tenant's events come later; by less than a lease (2 s, renewed every 0.5 s of real time), or the
      // jumps of the manual clock would end the leases of the attempts already hanging.
      f.clock.advance(100);
      await emitMany(f, tenant.id, 40);
      sent += expected[i]!;
      assert.ok(await reached(hanging, sent, 5_000), `tenant ${i}: ${hanging.requests.length} of ${sent} in flight`);
    }
    await sleep(200); // nothing more goes out: every hanging tenant is at its share
    for (const i of tenants.keys()) {
      const open = hanging.requests.filter((r) => r.path.startsWith(`/t${i}/`)).length;
      assert.equal(open, expected[i], `tenant ${i} holds its share`);
    }
    assert.equal(hanging.requests.length, sent);

    const d = await newUser(f.app, "pro");
    await createWebhook(f.app, d, f.receiver.url("/d"));
    f.clock.advance(1_000);
    const started = performance.now();
    await createInbox(f.app, d);
    const inTime = await reached(f.receiver, 1, TIMEOUT_MS / 2);
    const delayMs = Math.round(performance.now() - started);
    console.log(`a fourth tenant's delivery beside three hanging ones: ${inTime ? `${delayMs} ms` : "not within 5 s"}`);
    assert.ok(inTime, `the fourth tenant waited behind three hanging ones (${delayMs} ms)`);
  } finally {
    await hanging.close();
    await f.close();
  }
});

Deno.test("two instances claiming one account at the same moment: the second waits, then leaves it to the first", async () => {
  const f = await deliveryFixture();
  const other = await f.db.connect(2);
  try {
    await createWebhook(f.app, f.user, f.receiver.url("/one"));
    // Four events, one webhook: the per-event and per-webhook caps leave room, only the account's cap binds.
    await emitMany(f, f.user.id, 4);
    const caps: repo.Caps = { perEvent: 3, perWebhook: 16, perAccount: 2, slots: 64 };
    const now = f.clock.now();
    const lease = new Date(now.getTime() + 60_000);
    const claimOn = (sql: typeof other, worker: string, hold?: Promise<void>) =>
      sql.begin(async (tx) => {
        // Both read the same due rows (a claim locks none), so only taking the account can order them.
        const { claimed } = await repo.claim(tx, now, 2, caps, worker, lease, []);
        await hold;
        return claimed.length;
      });
    let release!: () => void;
    const first = claimOn(f.db.sql, "w1", new Promise((r) => release = r));
    await sleep(100);
    const second = claimOn(other, "w2");
    await sleep(200); // the second claim is now waiting for the first to commit
    release();
    assert.equal(await first, 2);
    assert.equal(await second, 0, "the second instance saw the first take the account");
    const owners = await f.db.sql<{ worker: string }[]>`SELECT worker FROM delivery_owners`;
    assert.deepEqual(owners.map((o) => o.worker), ["w1"], "the account is the first's: two sent over both instances");
  } finally {
    await f.close();
  }
});
