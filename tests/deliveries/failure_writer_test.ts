/**
 * Group commit of failures: one call records a batch on PostgreSQL as if its
 * failures were recorded one after the other (the batching rules themselves
 * are the shared Batcher's, tested with the success writer).
 */
import assert from "node:assert/strict";
import { FailureWriter } from "../../src/deliveries/failure_writer.ts";
import * as repo from "../../src/deliveries/repo.ts";
import { createWebhook } from "../_helpers/app.ts";
import { T0 } from "../_helpers/clock.ts";
import { claimExactly, deliveryFixture, emitInboxCreated } from "./_support.ts";

function failure(id: string, n: number, retry = true): repo.FailureToRecord {
  const finishedAt = new Date(T0 + n * 1_000);
  return {
    result: {
      id,
      worker: "me",
      responseStatus: 500,
      durationMs: 3,
      error: `HTTP 500 #${n}`,
      responseBody: "no",
      finishedAt,
    },
    retry: retry ? { id: `dlv_retry_${n}`, runAt: new Date(T0 + 60_000) } : undefined,
  };
}

Deno.test("a batch of failures counts each in order: a retry, the disabling one, then final ones; a lost one is told", async () => {
  const f = await deliveryFixture();
  try {
    const webhookId = await createWebhook(f.app, f.user, f.receiver.url("/fail"));
    await f.db.sql`UPDATE webhooks SET failure_count = 3 WHERE id = ${webhookId}`;
    const events = [];
    for (let i = 0; i < 6; i++) events.push(await emitInboxCreated(f));
    const rows = await f.db.sql<{ id: string }[]>`
      SELECT id FROM deliveries WHERE event_id = ANY(${events}) ORDER BY event_id`;
    const ids = rows.map((r) => r.id);
    const lease = new Date(f.clock.now().getTime() + 60_000);
    await claimExactly(f, ids.slice(0, 4), "me", lease);
    await claimExactly(f, [ids[4]!], "someone-else", lease);
    // ids[5] stays pending: disabling the webhook cancels it.

    const writer = new FailureWriter((batch) => repo.recordFailures(f.db.sql, "me", 5, batch));
    const outcomes = await Promise.all([0, 1, 2, 3, 4].map((i) => writer.record(failure(ids[i]!, i))));
    assert.deepEqual(outcomes, ["retry_scheduled", "disabled", "failed_final", "failed_final", "lost"]);

    const [hook] = await f.db.sql<{ failureCount: number; active: boolean; lastFailureReason: string }[]>`
      SELECT failure_count, active, last_failure_reason FROM webhooks WHERE id = ${webhookId}`;
    assert.deepEqual(
      [hook!.failureCount, hook!.active, hook!.lastFailureReason],
      [7, false, "HTTP 500 #3"],
      "four more failures counted, the latest one's reason kept",
    );
    const after = await f.db.sql<{ id: string; status: string; error: string | null }[]>`
      SELECT id, status, error FROM deliveries WHERE webhook_id = ${webhookId} ORDER BY created_at, id`;
    const status = new Map(after.map((r) => [r.id, r.status]));
    assert.deepEqual(ids.map((id) => status.get(id)), [
      "failed",
      "failed",
      "failed",
      "failed",
      "in_flight",
      "cancelled",
    ]);
    assert.equal(status.get("dlv_retry_0"), "cancelled", "the one retry queued was cancelled with the webhook");
    assert.equal(after.length, 7, "no retry queued for the disabling failure or those after it");
  } finally {
    await f.close();
  }
});
