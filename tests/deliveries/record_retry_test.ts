/**
 * An attempt's result is recorded even when the database does not answer for
 * a moment (a restart, a failover): recording tries again until shortly
 * before the lease ends, then gives up so the attempt can be taken over.
 * The database drops out through a stand-in `sql` whose first calls fail the
 * way postgres.js fails while the server is away; the PostgreSQL restart
 * drill (`tests/drills/postgres_restart_test.ts`) covers the real outage.
 */
import assert from "node:assert/strict";
import type { Sql } from "../../src/db/client.ts";
import { DISABLE_AFTER_FAILURES, type DispatcherDeps, recordWithRetry } from "../../src/deliveries/dispatcher.ts";
import type { Verdict } from "../../src/deliveries/verdict.ts";
import { recordResults, ResultWriter } from "../../src/deliveries/result_writer.ts";
import { createOutbox } from "../../src/deliveries/outbox.ts";
import type * as repo from "../../src/deliveries/repo.ts";
import { createWebhook } from "../_helpers/app.ts";
import { interceptQueries } from "../_helpers/queries.ts";
import { claimExactly, type DeliveryFixture, deliveryFixture, emitInboxCreated } from "./_support.ts";

const WORKER = "test-host:1:record";
const SUCCESS: Verdict = { ok: true, responseStatus: 204, durationMs: 12, responseBody: "" };

/** `sql` whose first `failures` queries fail as if the server had gone away. */
function flaky(sql: Sql, failures: number): { sql: Sql; calls: () => number } {
  const down = () => Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
  const { sql: proxy, queries } = interceptQueries(sql, (n) => n <= failures ? down() : undefined);
  return { sql: proxy, calls: queries };
}

/** One attempt to the fixture's receiver, claimed by WORKER with a lease of `leaseMs`. */
async function claimOne(f: DeliveryFixture, leaseMs: number): Promise<repo.ClaimedDelivery> {
  await createWebhook(f.app, f.user, f.receiver.url("/r"));
  const eventId = await emitInboxCreated(f);
  const [row] = await f.db.sql<{ id: string }[]>`SELECT id FROM deliveries WHERE event_id = ${eventId}`;
  const leaseUntil = new Date(f.clock.now().getTime() + leaseMs);
  const [claimed] = await claimExactly(f, [row!.id], WORKER, leaseUntil);
  assert.equal(claimed!.leaseUntil.getTime(), leaseUntil.getTime(), "the claim carries its lease");
  return claimed!;
}

/** The app's dispatcher, recording as WORKER through `sql`. */
function dispatcherOn(f: DeliveryFixture, sql: Sql): DispatcherDeps {
  const outbox = createOutbox({ sql, hub: f.app.deps.hub });
  const results = new ResultWriter((batch) => recordResults({ sql, outbox }, WORKER, DISABLE_AFTER_FAILURES, batch));
  return { ...f.app.deps.deliveries.dispatcher, sql, results, worker: WORKER };
}

async function statusOf(f: DeliveryFixture, id: string): Promise<string> {
  const [row] = await f.db.sql<{ status: string }[]>`SELECT status FROM deliveries WHERE id = ${id}`;
  return row!.status;
}

Deno.test("a result is recorded once the database answers again, within the lease", async () => {
  const f = await deliveryFixture();
  try {
    const d = await claimOne(f, 15_000);
    const db = flaky(f.app.deps.sql, 3);
    const deps = dispatcherOn(f, db.sql);
    assert.equal(await recordWithRetry(deps, d, SUCCESS), "succeeded");
    assert.equal(db.calls(), 4, "three failed tries, then the one that recorded");
    assert.equal(await statusOf(f, d.id), "succeeded");
    const [hook] = await f.db.sql<{ lastTriggeredAt: Date | null }[]>`
      SELECT last_triggered_at FROM webhooks WHERE id = ${d.webhookId}`;
    assert.notEqual(hook!.lastTriggeredAt, null, "the webhook's accounting happened too");
  } finally {
    await f.close();
  }
});

Deno.test("a failure is recorded after a blip too, with its retry queued once", async () => {
  const f = await deliveryFixture();
  try {
    const d = await claimOne(f, 15_000);
    const db = flaky(f.app.deps.sql, 2);
    const deps = dispatcherOn(f, db.sql);
    const verdict: Verdict = {
      ok: false,
      responseStatus: 500,
      reason: "HTTP 500",
      durationMs: 5,
      retryAfterSeconds: undefined,
      responseBody: "down",
    };
    assert.equal(await recordWithRetry(deps, d, verdict), "retry_scheduled");
    const rows = await f.db.sql<{ status: string; attempt: number }[]>`
      SELECT status, attempt FROM deliveries WHERE event_id = ${d.eventId} ORDER BY attempt`;
    assert.deepEqual(rows.map((r) => [r.status, r.attempt]), [["failed", 1], ["pending", 2]]);
  } finally {
    await f.close();
  }
});

Deno.test("recording gives up before the lease ends and leaves the attempt to be taken over", async () => {
  const f = await deliveryFixture();
  try {
    const leaseMs = 1_500;
    const d = await claimOne(f, leaseMs);
    const db = flaky(f.app.deps.sql, Infinity);
    const deps = dispatcherOn(f, db.sql);
    const started = Date.now();
    await assert.rejects(recordWithRetry(deps, d, SUCCESS), /ECONNREFUSED/);
    const tookMs = Date.now() - started;
    assert.ok(tookMs < leaseMs, `stopped trying before the lease ended (after ${tookMs} ms)`);
    assert.ok(db.calls() > 1, `tried more than once (${db.calls()} tries)`);
    assert.equal(await statusOf(f, d.id), "pending", "left pending for the next holder of its account");
  } finally {
    await f.close();
  }
});

Deno.test("a claim whose lease has already run out is not retried", async () => {
  const f = await deliveryFixture();
  try {
    const d = await claimOne(f, 100);
    const db = flaky(f.app.deps.sql, 1);
    const deps = dispatcherOn(f, db.sql);
    await assert.rejects(recordWithRetry(deps, d, SUCCESS), /ECONNREFUSED/);
    assert.equal(db.calls(), 1);
  } finally {
    await f.close();
  }
});
