/**
 * The notification hub over real PostgreSQL: one LISTEN connection fanned out
 * to every subscriber, local publications, and a re-check after the listening
 * connection is lost (here: terminated by the server; the PostgreSQL restart
 * is in tests/drills/postgres_restart_test.ts).
 */
import assert from "node:assert/strict";
import { createTestDb } from "../_helpers/db.ts";
import { waitUntil } from "../_helpers/wait.ts";
import { createNotificationHub, type Subscriber } from "../../src/notifications/hub.ts";
import type { Sql } from "../../src/db/client.ts";

/** A subscriber that records what it hears. */
function recorder(): Subscriber & { payloads: string[]; resyncs: number } {
  const r = {
    payloads: [] as string[],
    resyncs: 0,
    onNotify: (p: string) => void r.payloads.push(p),
    onResync: () => void r.resyncs++,
  };
  return r;
}

/** Backends whose last statement was a LISTEN on one of these channels. */
async function listeningBackends(sql: Sql, channels: string[]): Promise<number[]> {
  const rows = await sql<{ pid: number }[]>`
    SELECT DISTINCT pid FROM pg_stat_activity WHERE query ILIKE ANY(${channels.map((c) => `listen "${c}"%`)})`;
  return rows.map((r) => r.pid);
}

const channel = (name: string) => `hubtest_${name}_${crypto.randomUUID().slice(0, 8)}`;

Deno.test("the hub fans one LISTEN connection out to every subscriber of every channel", async () => {
  const db = await createTestDb();
  const hubSql = await db.connect(3);
  const hub = createNotificationHub(hubSql);
  try {
    const [a, b] = [channel("a"), channel("b")];
    const [a1, a2, b1] = [recorder(), recorder(), recorder()];
    hub.subscribe(a, a1);
    hub.subscribe(a, a2);
    await hub.start();
    hub.subscribe(b, b1); // After start: listened to at once.
    await waitUntil(async () => (await listeningBackends(db.sql, [b])).length === 1, 5_000, () => "the LISTEN on b");

    await db.sql`SELECT pg_notify(${a}, 'one'), pg_notify(${b}, 'two')`;
    await waitUntil(
      () => a1.payloads.length === 1 && a2.payloads.length === 1 && b1.payloads.length === 1,
      5_000,
      () => "both subscribers of a and the one of b",
    );
    assert.deepEqual([a1.payloads, a2.payloads, b1.payloads], [["one"], ["one"], ["two"]]);
    assert.equal((await listeningBackends(db.sql, [a, b])).length, 1, "one listening connection for both channels");
    assert.equal(a1.resyncs + a2.resyncs + b1.resyncs, 0, "no re-check without a reconnect");
  } finally {
    await hub.stop();
    await db.close();
  }
});

Deno.test("publishLocal reaches this instance's subscribers at once, without the database", () => {
  const hub = createNotificationHub(undefined);
  const [s1, s2] = [recorder(), recorder()];
  const c = channel("local");
  hub.subscribe(c, s1);
  const unsubscribe = hub.subscribe(c, s2);
  hub.publishLocal(c, "x");
  unsubscribe();
  hub.publishLocal(c);
  assert.deepEqual(s1.payloads, ["x", ""]);
  assert.deepEqual(s2.payloads, ["x"], "an unsubscribed subscriber hears nothing more");
});

Deno.test("a subscriber that throws does not keep the others from hearing", () => {
  const hub = createNotificationHub(undefined);
  const c = channel("throw");
  const heard = recorder();
  hub.subscribe(c, {
    onNotify: () => {
      throw new Error("boom");
    },
  });
  hub.subscribe(c, heard);
  hub.publishLocal(c, "still");
  assert.deepEqual(heard.payloads, ["still"]);
});

Deno.test("after the listening connection is lost, every subscriber re-checks and notifications flow again", async () => {
  const db = await createTestDb();
  const hubSql = await db.connect(3);
  const hub = createNotificationHub(hubSql);
  try {
    const [a, b] = [channel("lost_a"), channel("lost_b")];
    const [sa, sb] = [recorder(), recorder()];
    hub.subscribe(a, sa);
    hub.subscribe(b, sb);
    await hub.start();
    const [pid] = await listeningBackends(db.sql, [a, b]);
    assert.ok(pid, "the hub listens");

    await db.sql`SELECT pg_terminate_backend(${pid!})`;
    // Sent while the hub has no connection: lost, which is why subscribers re-check.
    await db.sql`SELECT pg_notify(${a}, 'lost')`;
    await waitUntil(() => sa.resyncs >= 1 && sb.resyncs >= 1, 5_000, () => "a re-check on both channels");

    await db.sql`SELECT pg_notify(${a}, 'after'), pg_notify(${b}, 'after')`;
    await waitUntil(
      () => sa.payloads.includes("after") && sb.payloads.includes("after"),
      5_000,
      () => "notifications after the reconnect",
    );
    const [again] = await listeningBackends(db.sql, [a, b]);
    assert.notEqual(again, pid, "a new connection listens");
  } finally {
    await hub.stop();
    await db.close();
  }
});
