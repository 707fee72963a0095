/**
 * The delivery guarantees across processes: `deno task start` children on one
 * PostgreSQL schema, a real HTTPS receiver, events committed by this process
 * (NOTIFY wakes the children). Kill -9 loses nothing; two instances deliver
 * each event to each webhook exactly once.
 */
import assert from "node:assert/strict";
import { createTestDb, type TestDb } from "../_helpers/db.ts";
import { serviceEnv, startService } from "../_helpers/process.ts";
import { pairs, type Receiver, startReceiver } from "../_helpers/receiver.ts";
import { apiAt, createWebhook, newOperatorAccount } from "../_helpers/app.ts";
import { commitInboxEvents } from "../_helpers/events.ts";
import { waitUntil } from "../_helpers/wait.ts";

const ENV = { DELIVERY_TIMEOUT_MS: "2000" };

/** A pro account with three webhooks to the receiver, made over the service's HTTP API. */
async function setUp(url: string, receiver: Receiver): Promise<{ accountId: string; webhooks: string[] }> {
  const api = apiAt(url);
  const account = await newOperatorAccount(api, "pro");
  const webhooks: string[] = [];
  for (const path of ["/a", "/b", "/c"]) webhooks.push(await createWebhook(api, account, receiver.url(path)));
  return { accountId: account.id, webhooks };
}

/** Commits `count` inbox.created events in transactions of ten; returns their ids. */
async function emitEvents(db: TestDb, accountId: string, count: number): Promise<string[]> {
  return (await commitInboxEvents(db.sql, accountId, count)).map((e) => e.id);
}

Deno.test("kill -9 mid-burst, then restart: every event reaches every webhook", async () => {
  const db = await createTestDb();
  const receiver = await startReceiver({ handler: { delayMs: 15 } });
  const first = await startService(serviceEnv(db, ENV));
  let second;
  try {
    const { accountId, webhooks } = await setUp(first.url, receiver);
    const events = await emitEvents(db, accountId, 300);
    await waitUntil(() => receiver.requests.length >= 150, 60_000, () => `${receiver.requests.length} received`);
    await first.kill();
    const atKill = receiver.requests.length;
    const inFlight = await db.sql`SELECT count(*)::int AS n FROM deliveries WHERE status <> 'succeeded'`;
    assert.ok(inFlight[0]!.n > 0, "the kill happened mid-burst, with work left");

    second = await startService(serviceEnv(db, ENV));
    const expected = events.length * webhooks.length;
    await waitUntil(() => pairs(receiver).size === expected, 90_000, () => `${pairs(receiver).size} of ${expected}`);
    for (const w of webhooks) for (const e of events) assert.ok(pairs(receiver).has(`${w} ${e}`), `${w} ${e}`);
    const duplicates = receiver.requests.length - expected;
    console.log(`kill -9 after ${atKill} requests; ${expected} pairs delivered, ${duplicates} duplicate(s)`);
    // The killed instance's in-flight attempts were delivered again after
    // their lease: let those repeats finish too, then nothing may be left.
    let left = -1;
    const settle = Date.now() + 30_000;
    while (left !== 0 && Date.now() < settle) {
      left = (await db.sql`SELECT count(*)::int AS n FROM deliveries WHERE status <> 'succeeded'`)[0]!.n;
      if (left !== 0) await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(left, 0, "nothing left pending or in flight");
  } finally {
    await first.kill().catch(() => {});
    if (second) assert.equal(await second.stop(), 0);
    await receiver.close();
    await db.close();
  }
});

Deno.test("two instances on one database: 1,050 deliveries, each exactly once", async () => {
  const db = await createTestDb();
  const receiver = await startReceiver({ handler: { delayMs: 2 } });
  const a = await startService(serviceEnv(db, ENV));
  const b = await startService(serviceEnv(db, ENV));
  try {
    const { accountId, webhooks } = await setUp(a.url, receiver);
    const events = await emitEvents(db, accountId, 350);
    const expected = events.length * webhooks.length;
    await waitUntil(() => receiver.requests.length >= expected, 90_000, () => `${receiver.requests.length}`);
    // A little longer: a duplicate would arrive after the last first delivery.
    await new Promise((r) => setTimeout(r, 500));
    const seen = pairs(receiver);
    assert.equal(seen.size, expected, "every event reached every webhook");
    assert.equal(receiver.requests.length, expected, "and none twice");
    assert.equal(new Set(receiver.requests.map((r) => r.headers["x-delivery-id"])).size, expected);
    const byWorker = await db.sql<{ worker: string; n: number }[]>`
      SELECT claimed_by AS worker, count(*)::int AS n FROM deliveries GROUP BY claimed_by`;
    console.log("deliveries per instance:", byWorker.map((r) => r.n).join(" / "));
  } finally {
    assert.equal(await a.stop(), 0);
    assert.equal(await b.stop(), 0);
    await receiver.close();
    await db.close();
  }
});
