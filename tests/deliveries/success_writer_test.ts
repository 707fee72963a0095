/**
 * Group commit of successes: the batching rules on a stand-in write, then
 * the one-statement batch write itself on PostgreSQL.
 */
import assert from "node:assert/strict";
import { SuccessWriter } from "../../src/deliveries/success_writer.ts";
import * as repo from "../../src/deliveries/repo.ts";
import { createWebhook } from "../_helpers/app.ts";
import { T0 } from "../_helpers/clock.ts";
import { claimExactly, deliveryFixture, emitInboxCreated } from "./_support.ts";

function result(id: string, finishedAt = new Date(0), responseBody: string | null = "ok"): repo.AttemptResult {
  return { id, worker: "w", responseStatus: 200, durationMs: 3, error: null, responseBody, finishedAt };
}

/** A write that waits until released, recording every batch it was given. */
function gatedWrite() {
  const batches: string[][] = [];
  const gates: (() => void)[] = [];
  const write = (results: repo.AttemptResult[]) => {
    batches.push(results.map((r) => r.id));
    return new Promise<Set<string>>((resolve) => {
      gates.push(() => resolve(new Set(results.map((r) => r.id).filter((id) => !id.startsWith("lost")))));
    });
  };
  const releaseNext = async () => {
    while (gates.length === 0) await new Promise((r) => setTimeout(r, 1));
    gates.shift()!();
  };
  return { batches, write, releaseNext };
}

Deno.test("an idle writer writes at once; successes finishing meanwhile go together in the next write", async () => {
  const g = gatedWrite();
  const writer = new SuccessWriter(g.write);
  const first = writer.record(result("a"));
  assert.deepEqual(g.batches, [["a"]], "written at once, alone");
  const rest = ["b", "c", "lost-d"].map((id) => writer.record(result(id)));
  assert.equal(g.batches.length, 1, "nothing more written while the first write is on its way");
  await g.releaseNext();
  assert.equal(await first, true);
  await g.releaseNext();
  assert.deepEqual(g.batches, [["a"], ["b", "c", "lost-d"]]);
  assert.deepEqual(await Promise.all(rest), [true, true, false], "each caller learns whether its attempt was recorded");
});

Deno.test("a batch is at most maxBatch results", async () => {
  const g = gatedWrite();
  const writer = new SuccessWriter(g.write, 2);
  const all = ["a", "b", "c", "d", "e"].map((id) => writer.record(result(id)));
  for (let i = 0; i < 3; i++) await g.releaseNext();
  await Promise.all(all);
  assert.deepEqual(g.batches, [["a"], ["b", "c"], ["d", "e"]]);
});

Deno.test("a failed write rejects its whole batch, and the writer carries on with the next", async () => {
  const batches: string[][] = [];
  const writer = new SuccessWriter((results) => {
    batches.push(results.map((r) => r.id));
    return batches.length <= 2
      ? Promise.reject(new Error("the database system is shutting down"))
      : Promise.resolve(new Set(results.map((r) => r.id)));
  });
  const outcomes = ["a", "b", "c"].map((id) => writer.record(result(id)).then(() => "ok", (e) => e.message));
  assert.deepEqual(await Promise.all(outcomes), [
    "the database system is shutting down",
    "the database system is shutting down",
    "the database system is shutting down",
  ]);
  assert.deepEqual(batches, [["a"], ["b", "c"]], "b and c failed together, in one batch");
  assert.equal(await writer.record(result("d")), true);
});

Deno.test("recordSuccesses closes the held attempts in one statement and skips one taken over", async () => {
  const f = await deliveryFixture();
  try {
    const webhookId = await createWebhook(f.app, f.user, f.receiver.url("/batch"));
    await f.db.sql`UPDATE webhooks SET failure_count = 3 WHERE id = ${webhookId}`;
    const events = [await emitInboxCreated(f), await emitInboxCreated(f), await emitInboxCreated(f)];
    const rows = await f.db.sql<{ id: string }[]>`
      SELECT id FROM deliveries WHERE event_id = ANY(${events}) ORDER BY event_id`;
    const ids = rows.map((r) => r.id);
    const lease = new Date(f.clock.now().getTime() + 60_000);
    await claimExactly(f, ids.slice(0, 2), "me", lease);
    await claimExactly(f, ids.slice(2), "someone-else", lease);

    const early = new Date(T0 + 1_000);
    const late = new Date(T0 + 2_000);
    const recorded = await repo.recordSuccesses(f.db.sql, "me", [
      result(ids[0]!, late, 'first, with "quotes", {braces} and \\ a backslash'),
      result(ids[1]!, early, null),
      result(ids[2]!, late),
    ]);
    assert.deepEqual([...recorded].sort(), ids.slice(0, 2).sort());
    const after = await f.db.sql<
      {
        id: string;
        status: string;
        responseStatus: number | null;
        leaseUntil: Date | null;
        responseBody: string | null;
      }[]
    >`
      SELECT id, status, response_status, lease_until, response_body FROM deliveries WHERE id = ANY(${ids})
      ORDER BY event_id`;
    assert.deepEqual(after.map((r) => [r.status, r.responseStatus, r.leaseUntil, r.responseBody]), [
      ["succeeded", 200, null, 'first, with "quotes", {braces} and \\ a backslash'],
      ["succeeded", 200, null, null],
      ["in_flight", null, lease, null],
    ], "each success keeps its own response body, in one statement for the batch");
    const [hook] = await f.db.sql<{ failureCount: number; lastTriggeredAt: Date }[]>`
      SELECT failure_count, last_triggered_at FROM webhooks WHERE id = ${webhookId}`;
    assert.equal(hook!.failureCount, 0, "the run of failures ended");
    assert.equal(hook!.lastTriggeredAt.getTime(), late.getTime(), "the latest success of the batch");
  } finally {
    await f.close();
  }
});
