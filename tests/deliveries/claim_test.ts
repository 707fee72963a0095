/**
 * The claim, statement by statement on PostgreSQL: the caps hold within one
 * claim and against what is already in flight, and an attempt whose webhook
 * was disabled after it was queued is cancelled, never sent.
 */
import assert from "node:assert/strict";
import * as repo from "../../src/deliveries/repo.ts";
import { createWebhook } from "../_helpers/app.ts";
import { commitInboxEvents } from "../_helpers/events.ts";
import { newUser } from "../_helpers/app.ts";
import { type DeliveryFixture, deliveryFixture, emitInboxCreated, pendingIndexReads } from "./_support.ts";

const CAPS = { perEvent: 3, perWebhook: 16, perAccount: 64, slots: 128 };

/**
 * One claim as the queue makes it, with `flying` its exchanges under way
 * (what the caps count) and `held` its attempts not finished (passed over);
 * returns the claimed attempts.
 */
async function claim(
  f: DeliveryFixture,
  worker = "w1",
  flying: readonly repo.Exchange[] = [],
  limit = 64,
  held: readonly repo.ClaimedDelivery[] = [],
): Promise<repo.ClaimedDelivery[]> {
  const now = f.clock.now();
  const lease = new Date(now.getTime() + 60_000);
  return (await repo.claim(f.db.sql, now, limit, CAPS, worker, lease, flying, held.map((d) => d.id))).claimed;
}

/**
 * A claim as the releases before `deliveries_reserve` make it: `deliveries_claim`
 * by position, with their nine arguments, for worker "old"; every row, the
 * last one the count.
 */
async function previousReleaseClaim(
  f: DeliveryFixture,
  caps: repo.Caps,
): Promise<{ id: string | null; webhookId: string | null; heldBack: number | null }[]> {
  const now = f.clock.now();
  const lease = new Date(now.getTime() + 60_000);
  return await f.db.sql`
    SELECT id, webhook_id, held_back FROM deliveries_claim(${now}, 64, ${caps.perEvent}, ${caps.perWebhook},
      ${caps.perAccount}, ${caps.slots}, 'old', ${lease}, ${repo.DUE_WINDOW})`;
}

async function statuses(f: DeliveryFixture): Promise<Record<string, number>> {
  const rows = await f.db.sql<{ status: string; n: number }[]>`
    SELECT status, count(*)::int AS n FROM deliveries GROUP BY status`;
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

async function owner(f: DeliveryFixture): Promise<string | undefined> {
  const [row] = await f.db.sql<{ worker: string }[]>`
    SELECT worker FROM delivery_owners WHERE account_id = ${f.user.id}`;
  return row?.worker;
}

Deno.test("one event to 10 webhooks: a claim takes 3, the next one more once an exchange ended, its result unrecorded", async () => {
  const f = await deliveryFixture();
  try {
    for (let i = 0; i < 10; i++) await createWebhook(f.app, f.user, f.receiver.url(`/w${i}`));
    await emitInboxCreated(f);
    const first = await claim(f);
    assert.equal(first.length, 3);
    assert.equal(await owner(f), "w1", "the claim took the account");
    assert.equal((await claim(f, "w2")).length, 0, "another instance gets none: the account is the first's");
    assert.equal(
      (await claim(f, "w1", first, 64, first)).length,
      0,
      "the event is at its cap while its 3 exchanges run",
    );
    // One exchange ended; its result is being recorded (the attempt still held), and it is no longer counted.
    const next = await claim(f, "w1", first.slice(1), 64, first);
    assert.equal(next.length, 1, "one exchange ended, one more may go");
    assert.ok(!first.some((d) => d.id === next[0]!.id), "not one of those it holds");
    assert.deepEqual(await statuses(f), { pending: 10 }, "a claim writes nothing to the attempts it returns");
  } finally {
    await f.close();
  }
});

Deno.test("20 events to one webhook: a claim takes 16, and once the holder's leases ran out another instance takes the account", async () => {
  const f = await deliveryFixture();
  try {
    await createWebhook(f.app, f.user, f.receiver.url("/one"));
    for (let i = 0; i < 20; i++) await emitInboxCreated(f);
    const first = await claim(f);
    assert.equal(first.length, 16);
    assert.equal((await claim(f, "w1", first, 64, first)).length, 0, "the webhook is at its cap");
    assert.equal((await claim(f, "w2")).length, 0, "another instance passes over the account");
    // The holder died: its lease on the account ran out.
    const past = new Date(f.clock.now().getTime() - 1);
    await f.db.sql`UPDATE delivery_owners SET lease_until = ${past}`;
    const taken = await claim(f, "w2");
    assert.equal(taken.length, 16, "what the first holder had not finished goes to the instance that took the account");
    assert.ok(first.every((d) => taken.some((t) => t.id === d.id)), "its 16 first, oldest first");
    assert.equal(await owner(f), "w2");
    const renewed = await repo.renewLeases(
      f.db.sql,
      "w1",
      first,
      f.clock.now(),
      new Date(f.clock.now().getTime() + 60_000),
    );
    assert.equal(renewed.size, 0, "the first holder's attempts are not renewed: it stops them");
  } finally {
    await f.close();
  }
});

Deno.test("the requeue of expired leases forgets the accounts whose holder's lease ran out, and only those", async () => {
  const f = await deliveryFixture();
  try {
    await createWebhook(f.app, f.user, f.receiver.url("/r"));
    await emitInboxCreated(f);
    const [d] = await claim(f);
    // Its exchange under way for a while: the heartbeat marks it in flight.
    const until = new Date(f.clock.now().getTime() + 60_000);
    const renewed = await repo.renewLeases(f.db.sql, "w1", [{ ...d!, mark: true }], f.clock.now(), until);
    assert.deepEqual([...renewed], [d!.id]);
    assert.deepEqual(await statuses(f), { in_flight: 1 });
    assert.equal(await repo.requeueExpiredLeases(f.db.sql, f.clock.now()), 0);
    assert.equal(await owner(f), "w1", "a live lease stays");
    const later = new Date(f.clock.now().getTime() + 61_000);
    assert.equal(await repo.requeueExpiredLeases(f.db.sql, later), 1);
    assert.equal(await owner(f), undefined, "the account is free for any instance's claim");
  } finally {
    await f.close();
  }
});

Deno.test("a claim of the previous release, which passes no exchanges, counts every attempt in flight", async () => {
  const f = await deliveryFixture();
  try {
    for (let i = 0; i < 10; i++) await createWebhook(f.app, f.user, f.receiver.url(`/p${i}`));
    await emitInboxCreated(f);
    const previous = () => previousReleaseClaim(f, CAPS);
    assert.equal((await previous()).filter((r) => r.id !== null).length, 3);
    assert.equal((await previous()).filter((r) => r.id !== null).length, 0, "the 3 in the database still count");
    assert.equal((await claim(f, "w2")).length, 0, "and the account is the old instance's");
  } finally {
    await f.close();
  }
});

Deno.test("a claim of the previous release counts its caps itself: per webhook and per account within one claim", async () => {
  const f = await deliveryFixture();
  try {
    for (let i = 0; i < 2; i++) await createWebhook(f.app, f.user, f.receiver.url(`/q${i}`));
    for (let i = 0; i < 30; i++) await emitInboxCreated(f);
    // 20 per account binds before the account's share of 100 slots (half: 50).
    const rows = await previousReleaseClaim(f, { perEvent: 3, perWebhook: 16, perAccount: 20, slots: 100 });
    const claimed = rows.filter((r) => r.id !== null);
    assert.equal(claimed.length, 20, "the account's cap");
    for (const [hook, n] of Map.groupBy(claimed, (r) => r.webhookId)) assert.ok(n.length <= 16, `${hook}: ${n.length}`);
    assert.equal(rows.at(-1)!.heldBack, 40, "the 60 due, less the 20 taken");
    assert.deepEqual(await statuses(f), { in_flight: 20, pending: 40 }, "what it returns is marked, and only that");
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
    const rows = ids;
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

Deno.test("past a head the caps hold back, a claim finds another tenant's attempt by its webhook, not by reading every pending one", async () => {
  const f = await deliveryFixture();
  try {
    const busy = await createWebhook(f.app, f.user, f.receiver.url("/busy"));
    const other = await newUser(f.app, "pro");
    await createWebhook(f.app, other, f.receiver.url("/other"));
    // Statistics taken while the table held only finished attempts (they say nothing is pending), then a
    // backlog of one webhook, far longer than the claim's window, and the other tenant's one attempt behind it.
    await commitInboxEvents(f.db.sql, f.user.id, 3_000, 500, f.clock.now());
    await f.db.sql`UPDATE deliveries SET status = 'succeeded', finished_at = now()`;
    await f.db.sql`ANALYZE deliveries`;
    await f.db.sql`UPDATE deliveries SET status = 'pending', finished_at = NULL`;
    f.clock.advance(1_000);
    await commitInboxEvents(f.db.sql, other.id, 1, 1, f.clock.now());
    // The backlog's webhook is at its cap: its exchanges under way.
    const flying = Array.from(
      { length: CAPS.perWebhook },
      (_, i) => ({ eventId: `evt_flying_${i}`, webhookId: busy, accountId: f.user.id }),
    );
    /** One claim, in a transaction rolled back so that every call sees the same queue, and the index entries it read. */
    const claimWithReads = async () => {
      let out: { claimed: repo.ClaimedDelivery[]; read: number } | undefined;
      const rollback = new Error("rolled back");
      await f.db.sql.begin(async (tx) => {
        const before = await pendingIndexReads(tx, f.db.schema);
        const now = f.clock.now();
        const got = await repo.claim(tx, now, 8, CAPS, "w1", new Date(now.getTime() + 60_000), flying);
        out = { claimed: got.claimed, read: (await pendingIndexReads(tx, f.db.schema)) - before };
        throw rollback;
      }).catch((e) => {
        if (e !== rollback) throw e;
      });
      return out!;
    };
    // The first look passes over the index entries the finished attempts left behind (and marks them dead).
    await claimWithReads();
    const { claimed, read } = await claimWithReads();
    assert.deepEqual(
      claimed.map((d) => d.accountId),
      [other.id],
      "the other tenant's attempt, from behind the backlog",
    );
    // The head of the queue is read as always (its window of repo.DUE_WINDOW rows and one probe past it, with
    // the index entries that finished attempts left): about 1,500 entries. Reading the backlog in due order at
    // each step of the walk by webhook, as with these statistics the planner did, read it over and over.
    assert.ok(read < 3_001, `the claim read ${read} index entries, more than the 3,001 pending attempts`);
  } finally {
    await f.close();
  }
});

for (const cap of ["webhook", "account"] as const) {
  Deno.test(`a claim whose head its ${cap}'s cap partly holds back also takes another tenant's attempt from behind that backlog`, async () => {
    const f = await deliveryFixture();
    try {
      // The backlog on one webhook, whose cap (16) binds, or on three, where the account's (here 16) does.
      const caps = cap === "webhook" ? CAPS : { ...CAPS, perWebhook: 64, perAccount: 16 };
      const busy: string[] = [];
      for (let i = 0; i < (cap === "webhook" ? 1 : 3); i++) {
        busy.push(await createWebhook(f.app, f.user, f.receiver.url(`/busy${i}`)));
      }
      const other = await newUser(f.app, "pro");
      await createWebhook(f.app, other, f.receiver.url("/other"));
      // A backlog longer than the claim's window, then the other tenant's attempt.
      await commitInboxEvents(f.db.sql, f.user.id, repo.DUE_WINDOW, 256, f.clock.now());
      f.clock.advance(1_000);
      await commitInboxEvents(f.db.sql, other.id, 1, 1, f.clock.now());
      // 12 under way, of the first webhook (at 12 of 16) or of the account (at 12 of 16): room for 4 more.
      const flying = Array.from({ length: 12 }, (_, i) => ({
        eventId: `evt_flying_${i}`,
        webhookId: busy[i % busy.length]!,
        accountId: f.user.id,
      }));
      const now = f.clock.now();
      const got = await repo.claim(f.db.sql, now, 8, caps, "w1", new Date(now.getTime() + 60_000), flying);
      const byAccount = Map.groupBy(got.claimed, (d) => d.accountId);
      assert.equal(byAccount.get(f.user.id)?.length, 4, `the backlog up to its ${cap}'s cap`);
      // Before, the 8 rows locked at the head filled the claim, some held back, and the other tenant waited for
      // a claim that found the backlog at its cap before it locked anything.
      assert.equal(byAccount.get(other.id)?.length, 1, "and the other tenant's attempt in the same claim");
    } finally {
      await f.close();
    }
  });
}

Deno.test("a claim keeps an account it holds with half a lease left without a write, renews a shorter one, and returns the account's lease", async () => {
  const f = await deliveryFixture();
  try {
    await createWebhook(f.app, f.user, f.receiver.url("/keep"));
    for (let i = 0; i < 3; i++) await emitInboxCreated(f);
    const lease = async () =>
      (await f.db.sql<{ until: Date; version: string }[]>`
        SELECT lease_until AS until, xmin::text AS version FROM delivery_owners WHERE account_id = ${f.user.id}`)[0]!;
    const at = (now: Date, ms: number) => new Date(now.getTime() + ms);
    const claimAt = async (leaseMs: number, held: readonly repo.ClaimedDelivery[]) => {
      const now = f.clock.now();
      return (await repo.claim(f.db.sql, now, 1, CAPS, "w1", at(now, leaseMs), held, held.map((d) => d.id))).claimed;
    };
    const [first] = await claimAt(2_000, []);
    const taken = await lease();
    assert.equal(first!.leaseUntil.getTime(), taken.until.getTime(), "a new holder's lease, as written");

    // Half of the lease asked for or more is left: the row is not written, and the attempt gets the lease it has.
    f.clock.advance(900);
    const [second] = await claimAt(2_000, [first!]);
    assert.ok(second && second.id !== first!.id);
    assert.deepEqual(await lease(), taken, "no new version of the account's row");
    assert.equal(second.leaseUntil.getTime(), taken.until.getTime());

    // Less than half is left: renewed as before.
    f.clock.advance(200);
    const [third] = await claimAt(2_000, [first!, second]);
    const renewed = await lease();
    assert.notEqual(renewed.version, taken.version);
    assert.equal(renewed.until.getTime(), f.clock.now().getTime() + 2_000);
    assert.equal(third!.leaseUntil.getTime(), renewed.until.getTime());
  } finally {
    await f.close();
  }
});
