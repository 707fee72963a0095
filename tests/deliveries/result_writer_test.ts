/**
 * Group commit of results: the batching rules on a stand-in write, then the
 * one-call batch write itself on PostgreSQL (`deliveries_record_results`):
 * successes, failures, and batches mixing both for one webhook, applied in
 * the batch's order.
 */
import assert from "node:assert/strict";
import { recordResults, ResultWriter } from "../../src/deliveries/result_writer.ts";
import { newEvent } from "../../src/deliveries/outbox.ts";
import type * as repo from "../../src/deliveries/repo.ts";
import { createWebhook } from "../_helpers/app.ts";
import { T0 } from "../_helpers/clock.ts";
import { claimExactly, type DeliveryFixture, deliveryFixture, emitInboxCreated } from "./_support.ts";

/** T0 plus `s` seconds. */
const at = (s: number) => new Date(T0 + s * 1_000);

function success(id: string, s = 0, responseBody: string | null = "ok"): repo.ResultToRecord {
  return {
    ok: true,
    result: {
      id,
      worker: "me",
      url: "https://hooks.test/",
      responseStatus: 200,
      durationMs: 3,
      error: null,
      responseBody,
      finishedAt: at(s),
    },
  };
}

/**
 * A failure finished at T0 + `s` seconds, its reason `HTTP 500 #s`, and its
 * retry `dlv_retry_s` unless `retry` is false; the `webhook.disabled` event it
 * would announce is on a stand-in account (`ownedBy` puts it on the fixture's).
 */
function failure(id: string, s: number, retry = true): repo.ResultToRecord {
  const data = { webhookId: "wh_x", url: "https://x", failureCount: 5, lastFailureReason: `HTTP 500 #${s}` };
  return {
    ok: false,
    result: {
      id,
      worker: "me",
      url: "https://hooks.test/",
      responseStatus: 500,
      durationMs: 3,
      error: `HTTP 500 #${s}`,
      responseBody: "no",
      finishedAt: at(s),
    },
    retry: retry ? { id: `dlv_retry_${s}`, runAt: new Date(T0 + 60_000) } : undefined,
    disabling: {
      accountId: "acc_stand_in",
      ref: id,
      event: newEvent("webhook.disabled", { ...data, disabledAt: at(s).toISOString() }, at(s)),
    },
  };
}

/** `r` with the event it would announce on the fixture's account (an event needs a real one). */
function ownedBy(f: DeliveryFixture, r: repo.ResultToRecord): repo.ResultToRecord {
  return r.ok ? r : { ...r, disabling: { ...r.disabling, accountId: f.user.id } };
}

/** A write that waits until released, recording every batch it was given; ids starting with "lost" are lost. */
function gatedWrite() {
  const batches: string[][] = [];
  const gates: (() => void)[] = [];
  const write = (results: repo.ResultToRecord[]) => {
    batches.push(results.map((r) => r.result.id));
    return new Promise<Map<string, repo.Recorded>>((resolve) => {
      gates.push(() =>
        resolve(
          new Map(
            results.filter((r) => !r.result.id.startsWith("lost"))
              .map((r) => [r.result.id, r.ok ? "succeeded" : "retry_scheduled"]),
          ),
        )
      );
    });
  };
  const releaseNext = async () => {
    while (gates.length === 0) await new Promise((r) => setTimeout(r, 1));
    gates.shift()!();
  };
  return { batches, write, releaseNext };
}

Deno.test("an idle writer writes at once; results finishing meanwhile go together in the next write", async () => {
  const g = gatedWrite();
  const writer = new ResultWriter(g.write);
  const first = writer.record(success("a"));
  assert.deepEqual(g.batches, [["a"]], "written at once, alone");
  const rest = [success("b"), failure("c", 1), success("lost-d")].map((r) => writer.record(r));
  assert.equal(g.batches.length, 1, "nothing more written while the first write is on its way");
  await g.releaseNext();
  assert.equal(await first, "succeeded");
  await g.releaseNext();
  assert.deepEqual(g.batches, [["a"], ["b", "c", "lost-d"]], "successes and failures in one batch, in their order");
  assert.deepEqual(
    await Promise.all(rest),
    ["succeeded", "retry_scheduled", "lost"],
    "each caller learns what recording its attempt did",
  );
});

Deno.test("a batch is at most maxBatch results", async () => {
  const g = gatedWrite();
  const writer = new ResultWriter(g.write, 2);
  const all = ["a", "b", "c", "d", "e"].map((id) => writer.record(success(id)));
  for (let i = 0; i < 3; i++) await g.releaseNext();
  await Promise.all(all);
  assert.deepEqual(g.batches, [["a"], ["b", "c"], ["d", "e"]]);
});

Deno.test("a failed write rejects its whole batch, and the writer carries on with the next", async () => {
  const batches: string[][] = [];
  const writer = new ResultWriter((results) => {
    batches.push(results.map((r) => r.result.id));
    return batches.length <= 2
      ? Promise.reject(new Error("the database system is shutting down"))
      : Promise.resolve(new Map(results.map((r) => [r.result.id, "succeeded"])));
  });
  const outcomes = ["a", "b", "c"].map((id) => writer.record(success(id)).then(() => "ok", (e) => e.message));
  assert.deepEqual(await Promise.all(outcomes), [
    "the database system is shutting down",
    "the database system is shutting down",
    "the database system is shutting down",
  ]);
  assert.deepEqual(batches, [["a"], ["b", "c"]], "b and c failed together, in one batch");
  assert.equal(await writer.record(success("d")), "succeeded");
});

/**
 * A webhook whose run of failures stands at `failureCount`, and `held` +
 * `others` attempts of it (one event each, in that order): the first `held`
 * claimed by "me" (pending, their account "me"'s), the next `others` in
 * flight under another worker (marked by its heartbeat before "me" took the
 * account over), the rest pending.
 */
async function attemptsOf(
  f: DeliveryFixture,
  failureCount: number,
  n: { held: number; others?: number; pending?: number },
): Promise<{ webhookId: string; ids: string[]; lease: Date }> {
  const webhookId = await createWebhook(f.app, f.user, f.receiver.url("/batch"));
  await f.db.sql`UPDATE webhooks SET failure_count = ${failureCount} WHERE id = ${webhookId}`;
  const events = [];
  for (let i = 0; i < n.held + (n.others ?? 0) + (n.pending ?? 0); i++) events.push(await emitInboxCreated(f));
  const rows = await f.db.sql<{ id: string }[]>`
    SELECT id FROM deliveries WHERE event_id = ANY(${events}) ORDER BY event_id`;
  const ids = rows.map((r) => r.id);
  const lease = new Date(f.clock.now().getTime() + 60_000);
  await claimExactly(f, ids.slice(0, n.held), "me", lease);
  const others = ids.slice(n.held, n.held + (n.others ?? 0));
  await f.db.sql`
    UPDATE deliveries SET status = 'in_flight', claimed_by = 'someone-else', lease_until = ${lease}
    WHERE id = ANY(${others})`;
  return { webhookId, ids, lease };
}

interface Hook {
  failureCount: number;
  active: boolean;
  lastTriggeredAt: Date | null;
  lastFailureAt: Date | null;
  lastFailureReason: string | null;
}

async function hookOf(f: DeliveryFixture, webhookId: string): Promise<Hook> {
  const [hook] = await f.db.sql<Hook[]>`
    SELECT failure_count, active, last_triggered_at, last_failure_at, last_failure_reason
    FROM webhooks WHERE id = ${webhookId}`;
  return hook!;
}

/** Each attempt's status, by id, of the webhook (retries included). */
async function statuses(f: DeliveryFixture, webhookId: string): Promise<Map<string, string>> {
  const rows = await f.db.sql<{ id: string; status: string }[]>`
    SELECT id, status FROM deliveries WHERE webhook_id = ${webhookId}`;
  return new Map(rows.map((r) => [r.id, r.status]));
}

/** What one call of recordResults did with `batch`, in the batch's order. */
async function record(f: DeliveryFixture, batch: repo.ResultToRecord[]): Promise<(repo.Recorded | undefined)[]> {
  const recorded = await recordResults(f.app.deps, "me", 5, batch.map((r) => ownedBy(f, r)));
  return batch.map((r) => recorded.get(r.result.id));
}

Deno.test("successes close the held attempts in one call and skip one taken over", async () => {
  const f = await deliveryFixture();
  try {
    const { webhookId, ids, lease } = await attemptsOf(f, 3, { held: 2, others: 1 });
    const outcomes = await record(f, [
      success(ids[0]!, 2, 'first, with "quotes", {braces} and \\ a backslash'),
      success(ids[1]!, 1, null),
      success(ids[2]!, 2),
    ]);
    assert.deepEqual(outcomes, ["succeeded", "succeeded", "lost"]);
    const after = await f.db.sql<
      {
        id: string;
        status: string;
        responseStatus: number | null;
        leaseUntil: Date | null;
        responseBody: string | null;
        error: string | null;
      }[]
    >`
      SELECT id, status, response_status, lease_until, response_body, error FROM deliveries WHERE id = ANY(${ids})
      ORDER BY event_id`;
    assert.deepEqual(after.map((r) => [r.status, r.responseStatus, r.leaseUntil, r.responseBody, r.error]), [
      ["succeeded", 200, null, 'first, with "quotes", {braces} and \\ a backslash', null],
      ["succeeded", 200, null, null, null],
      ["in_flight", null, lease, null, null],
    ], "each success keeps its own response body, in one call for the batch");
    const hook = await hookOf(f, webhookId);
    assert.equal(hook.failureCount, 0, "the run of failures ended");
    assert.equal(hook.lastTriggeredAt!.getTime(), at(2).getTime(), "the latest success of the batch");
    assert.equal(hook.lastFailureReason, null, "a success leaves the last failure as it was");
    assert.equal(await f.db.sql`SELECT 1 FROM deliveries WHERE webhook_id = ${webhookId}`.then((r) => r.length), 3);
  } finally {
    await f.close();
  }
});

Deno.test("a batch of failures counts each in order: a retry, the disabling one, then final ones; a lost one is told", async () => {
  const f = await deliveryFixture();
  try {
    // ids[5] stays pending: disabling the webhook cancels it.
    const { webhookId, ids } = await attemptsOf(f, 3, { held: 4, others: 1, pending: 1 });
    const writer = new ResultWriter((batch) => recordResults(f.app.deps, "me", 5, batch));
    const outcomes = await Promise.all([0, 1, 2, 3, 4].map((i) => writer.record(ownedBy(f, failure(ids[i]!, i)))));
    assert.deepEqual(outcomes, ["retry_scheduled", "disabled", "failed_final", "failed_final", "lost"]);

    const hook = await hookOf(f, webhookId);
    assert.deepEqual(
      [hook.failureCount, hook.active, hook.lastFailureReason, hook.lastTriggeredAt?.getTime()],
      [7, false, "HTTP 500 #3", at(3).getTime()],
      "four more failures counted, the latest one's reason and time kept",
    );
    const status = await statuses(f, webhookId);
    assert.deepEqual(ids.map((id) => status.get(id)), [
      "failed",
      "failed",
      "failed",
      "failed",
      "in_flight",
      "cancelled",
    ]);
    assert.equal(status.get("dlv_retry_0"), "cancelled", "the one retry queued was cancelled with the webhook");
    assert.equal(status.size, 7, "no retry queued for the disabling failure or those after it");
  } finally {
    await f.close();
  }
});

Deno.test("a success then failures of one webhook in one batch: the failures count from 0", async () => {
  const f = await deliveryFixture();
  try {
    // Counted from the webhook's 3, the second failure would be the 5th and disable it.
    const { webhookId, ids } = await attemptsOf(f, 3, { held: 3 });
    const outcomes = await record(f, [success(ids[0]!, 1), failure(ids[1]!, 2), failure(ids[2]!, 3)]);
    assert.deepEqual(outcomes, ["succeeded", "retry_scheduled", "retry_scheduled"]);
    const hook = await hookOf(f, webhookId);
    assert.deepEqual(
      [hook.failureCount, hook.active, hook.lastFailureReason, hook.lastTriggeredAt?.getTime()],
      [2, true, "HTTP 500 #3", at(3).getTime()],
      "two failures since the success; the last result's time",
    );
    const status = await statuses(f, webhookId);
    assert.deepEqual(
      [...ids, "dlv_retry_2", "dlv_retry_3"].map((id) => status.get(id)),
      ["succeeded", "failed", "failed", "pending", "pending"],
    );
  } finally {
    await f.close();
  }
});

Deno.test("failures then a success of one webhook in one batch: the success ends the run", async () => {
  const f = await deliveryFixture();
  try {
    const { webhookId, ids } = await attemptsOf(f, 2, { held: 4 });
    const outcomes = await record(f, [
      failure(ids[0]!, 1),
      failure(ids[1]!, 2),
      success(ids[2]!, 5),
      success(ids[3]!, 4),
    ]);
    assert.deepEqual(outcomes, ["retry_scheduled", "retry_scheduled", "succeeded", "succeeded"]);
    const hook = await hookOf(f, webhookId);
    assert.deepEqual(
      [hook.failureCount, hook.active, hook.lastFailureReason, hook.lastFailureAt?.getTime()],
      [0, true, "HTTP 500 #2", at(2).getTime()],
      "the run ended; the last failure is still the one told",
    );
    assert.equal(hook.lastTriggeredAt?.getTime(), at(5).getTime(), "the latest of the successes that came last");
  } finally {
    await f.close();
  }
});

Deno.test("a success after the disabling failure of a batch ends the run but does not enable the webhook again", async () => {
  const f = await deliveryFixture();
  try {
    const { webhookId, ids } = await attemptsOf(f, 3, { held: 4, pending: 1 });
    const outcomes = await record(f, [
      failure(ids[0]!, 1),
      failure(ids[1]!, 2),
      success(ids[2]!, 3),
      failure(ids[3]!, 4),
    ]);
    assert.deepEqual(outcomes, ["retry_scheduled", "disabled", "succeeded", "failed_final"]);
    const hook = await hookOf(f, webhookId);
    assert.deepEqual(
      [hook.failureCount, hook.active, hook.lastFailureReason, hook.lastTriggeredAt?.getTime()],
      [1, false, "HTTP 500 #4", at(4).getTime()],
      "disabled by the 5th; one failure since the success",
    );
    const status = await statuses(f, webhookId);
    assert.deepEqual(
      [...ids, "dlv_retry_1"].map((id) => status.get(id)),
      ["failed", "failed", "succeeded", "failed", "cancelled", "cancelled"],
      "the pending attempt and the one retry queued cancelled with the webhook",
    );
  } finally {
    await f.close();
  }
});

Deno.test("lost attempts among a mixed batch count for nothing: a lost success ends no run, a lost failure adds none", async () => {
  const f = await deliveryFixture();
  try {
    const { webhookId, ids, lease } = await attemptsOf(f, 3, { held: 2, others: 2 });
    const [mine1, mine2, theirs1, theirs2] = ids as [string, string, string, string];
    const outcomes = await record(f, [
      failure(theirs1, 1),
      failure(mine1, 2),
      success(theirs2, 3),
      failure(mine2, 4),
    ]);
    assert.deepEqual(outcomes, ["lost", "retry_scheduled", "lost", "disabled"]);
    const hook = await hookOf(f, webhookId);
    assert.deepEqual([hook.failureCount, hook.active, hook.lastTriggeredAt?.getTime()], [5, false, at(4).getTime()]);
    const rows = await f.db.sql<{ status: string; leaseUntil: Date | null; error: string | null }[]>`
      SELECT status, lease_until, error FROM deliveries WHERE id IN (${theirs1}, ${theirs2}) ORDER BY event_id`;
    assert.deepEqual(
      rows.map((r) => [r.status, r.leaseUntil?.getTime(), r.error]),
      [["in_flight", lease.getTime(), null], ["in_flight", lease.getTime(), null]],
      "the other worker's attempts are untouched",
    );
  } finally {
    await f.close();
  }
});

Deno.test("a call as the previous release makes it (eleven arguments, no hold) still records", async () => {
  const f = await deliveryFixture();
  try {
    const { webhookId, ids } = await attemptsOf(f, 0, { held: 1 });
    const rows = await f.db.sql<{ id: string; outcome: string }[]>`
      SELECT * FROM deliveries_record_results('me', 5, ${[ids[0]!]}::text[], '{f}'::boolean[], '{500}'::int[],
        '{3}'::int[], '{"HTTP 500"}'::text[], ${[at(1).toISOString()]}::timestamptz[], '{no}'::text[],
        '{dlv_retry_old}'::text[], ${[at(60).toISOString()]}::timestamptz[])`;
    assert.deepEqual(rows.map((r) => [r.id, r.outcome]), [[ids[0], "retry_scheduled"]]);
    const [hook] = await f.db.sql`SELECT failure_count, hold_until FROM webhooks WHERE id = ${webhookId}`;
    assert.deepEqual([hook!.failureCount, hook!.holdUntil], [1, null]);
  } finally {
    await f.close();
  }
});

Deno.test("a claimed attempt cancelled while it was being sent records what its exchange got, and where it went", async () => {
  const f = await deliveryFixture();
  try {
    const { ids } = await attemptsOf(f, 0, { held: 1 });
    // Another failure of the webhook disabled it meanwhile: its pending attempts, this one among them, cancelled.
    await f.db.sql`UPDATE deliveries SET status = 'cancelled', finished_at = ${at(1)} WHERE id = ${ids[0]!}`;
    const sent = success(ids[0]!, 2);
    sent.result.url = "https://hooks.test/sent-here";
    assert.deepEqual(await record(f, [sent]), ["succeeded"]);
    const [row] = await f.db.sql`SELECT status, url, claimed_by FROM deliveries WHERE id = ${ids[0]!}`;
    assert.deepEqual([row!.status, row!.url, row!.claimedBy], ["succeeded", "https://hooks.test/sent-here", "me"]);
  } finally {
    await f.close();
  }
});

Deno.test("a claimed attempt whose account another instance took over records nothing: that instance sends it", async () => {
  const f = await deliveryFixture();
  try {
    const { webhookId, ids } = await attemptsOf(f, 0, { held: 2 });
    await f.db.sql`UPDATE delivery_owners SET worker = 'someone-else'`;
    assert.deepEqual(await record(f, [success(ids[0]!, 1), failure(ids[1]!, 2)]), ["lost", "lost"]);
    const rows = await f.db.sql<{ status: string }[]>`SELECT status FROM deliveries WHERE id = ANY(${ids}) ORDER BY id`;
    assert.deepEqual(rows.map((r) => r.status), ["pending", "pending"], "left for the account's holder");
    assert.equal((await hookOf(f, webhookId)).failureCount, 0, "no failure counted");
  } finally {
    await f.close();
  }
});

Deno.test("the previous release's claim marks what it returns in flight, and its twelve-argument record closes it", async () => {
  const f = await deliveryFixture();
  try {
    const webhookId = await createWebhook(f.app, f.user, f.receiver.url("/old-release"));
    await emitInboxCreated(f);
    const lease = new Date(f.clock.now().getTime() + 60_000);
    const [claimed] = await f.db.sql<{ id: string; url: string }[]>`
      SELECT id, url FROM deliveries_claim(${f.clock.now()}, 8, 3, 16, 64, 128, 'old', ${lease}, 512,
        '{}'::text[], '{}'::text[], '{}'::text[]) WHERE id IS NOT NULL`;
    const [marked] = await f.db.sql`SELECT status, claimed_by, url FROM deliveries WHERE id = ${claimed!.id}`;
    assert.deepEqual([marked!.status, marked!.claimedBy, marked!.url], ["in_flight", "old", claimed!.url]);
    const rows = await f.db.sql<{ id: string; outcome: string }[]>`
      SELECT * FROM deliveries_record_results('old', 5, ${[claimed!.id]}::text[], '{t}'::boolean[], '{200}'::int[],
        '{3}'::int[], '{NULL}'::text[], ${[at(1).toISOString()]}::timestamptz[], '{ok}'::text[],
        '{NULL}'::text[], '{NULL}'::timestamptz[], '{NULL}'::timestamptz[])`;
    assert.deepEqual(rows.map((r) => [r.id, r.outcome]), [[claimed!.id, "succeeded"]]);
    const [row] = await f.db.sql`SELECT status, url FROM deliveries WHERE id = ${claimed!.id}`;
    assert.deepEqual([row!.status, row!.url], ["succeeded", claimed!.url], "the URL its claim wrote is kept");
    assert.equal((await hookOf(f, webhookId)).failureCount, 0);
  } finally {
    await f.close();
  }
});
