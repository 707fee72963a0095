/**
 * `POST /api/user-webhooks/{id}/recover` over the real path: events whose
 * latest attempt failed or was cancelled (by real deliveries to a real HTTPS
 * receiver, a disabling, the claim of a disabled webhook) are queued once
 * each, oldest first, in one statement; a dry run counts them and queues
 * nothing, on an inactive webhook too; a real recover needs an active one;
 * recover shares the redelivery limit, one call each.
 */
import assert from "node:assert/strict";
import { createOutbox } from "../../src/deliveries/outbox.ts";
import { createWebhook } from "../_helpers/app.ts";
import { interceptQueries } from "../_helpers/queries.ts";
import { T0 } from "../_helpers/clock.ts";
import { body, expectError } from "../_helpers/expect.ts";
import { type DeliveryFixture, deliveryFixture, emitInboxCreated } from "./_support.ts";

/** T0 plus `s` seconds, as the API writes it. */
const at = (s: number) => new Date(T0 + s * 1_000).toISOString();

function recover(f: DeliveryFixture, id: string, json: unknown): Promise<Response> {
  return f.app.request(`/api/user-webhooks/${id}/recover`, { method: "POST", json, cookie: f.user.cookie });
}

/** A recover that answers `status`; its body. */
async function recoverOk(
  f: DeliveryFixture,
  id: string,
  json: unknown,
  status: number,
): Promise<Record<string, unknown>> {
  const res = await recover(f, id, json);
  const out = await body(res);
  assert.equal(res.status, status, JSON.stringify(out));
  assert.match(res.headers.get("ratelimit-policy") ?? "", /^"webhook-redeliver";/, "the redelivery limit");
  return out;
}

async function patch(f: DeliveryFixture, id: string, json: unknown): Promise<void> {
  const res = await f.app.request(`/api/user-webhooks/${id}`, { method: "PATCH", json, cookie: f.user.cookie });
  assert.equal(res.status, 200);
  await res.body?.cancel();
}

/** Emits `inbox.created` for `inboxId` at T0 + `s` seconds. */
async function emitAt(f: DeliveryFixture, s: number, inboxId: string): Promise<string> {
  f.clock.advance(T0 + s * 1_000 - f.clock.now().getTime());
  return await emitInboxCreated(f, inboxId);
}

/** The webhook's attempts of each event, by inbox id: [attempt, status] in the order they were queued. */
async function attempts(f: DeliveryFixture, webhookId: string): Promise<Map<string, [number, string][]>> {
  const rows = await f.db.sql<{ inbox: string; attempt: number; status: string }[]>`
    SELECT e.payload::jsonb -> 'data' ->> 'inboxId' AS inbox, d.attempt, d.status
    FROM deliveries d JOIN events e ON e.id = d.event_id WHERE d.webhook_id = ${webhookId} ORDER BY d.seq`;
  const out = new Map<string, [number, string][]>();
  for (const r of rows) out.set(r.inbox, [...(out.get(r.inbox) ?? []), [r.attempt, r.status]]);
  return out;
}

Deno.test("recover queues once each event whose latest attempt failed or was cancelled in the window, oldest first", async () => {
  const f = await deliveryFixture();
  try {
    // The receiver fails every event but those of inboxes named in `healthy`.
    const healthy = new Set(["inb_ok", "inb_later"]);
    f.receiver.respond((req) => ({ status: healthy.has(JSON.parse(req.body).data.inboxId) ? 200 : 500 }));
    const id = await createWebhook(f.app, f.user, f.receiver.url("/recover"));
    await emitAt(f, 1, "inb_ok");
    await f.app.deps.deliveries.queue.drain();
    // Five failures in a row: the fifth (inb_5) disables the webhook, whose queued retries are cancelled.
    // One at a time, so that they fail in this order (sent together, they may be answered in any order).
    await emitAt(f, 2, "inb_before");
    await f.app.deps.deliveries.queue.drain();
    for (const n of [2, 3, 4, 5]) {
      await emitAt(f, n + 1, `inb_${n}`);
      await f.app.deps.deliveries.queue.drain();
    }
    const before = await attempts(f, id);
    assert.deepEqual(before.get("inb_2"), [[1, "failed"], [2, "cancelled"]]);
    assert.deepEqual(before.get("inb_5"), [[1, "failed"]], "the disabling failure, no retry");

    // Inactive: a dry run answers its count (inb_before is out of the window, inb_ok succeeded), a real one 400.
    f.clock.advance(T0 + 100_000 - f.clock.now().getTime());
    assert.deepEqual(await recoverOk(f, id, { since: at(3), dryRun: true }, 200), { wouldQueue: 4 });
    await expectError(await recover(f, id, { since: at(3) }), 400, "WEBHOOK_INACTIVE");
    assert.deepEqual(await attempts(f, id), before, "nothing queued");

    await patch(f, id, { active: true });
    assert.deepEqual(await recoverOk(f, id, { since: at(3), until: at(4), dryRun: true }, 200), { wouldQueue: 2 });
    assert.deepEqual(await recoverOk(f, id, { since: at(0), dryRun: true }, 200), { wouldQueue: 5 });
    assert.deepEqual(await recoverOk(f, id, { since: at(3) }, 202), { queued: 4 });
    const queued = await f.db.sql<{ inbox: string; attempt: number; runAt: Date; createdAt: Date }[]>`
      SELECT e.payload::jsonb -> 'data' ->> 'inboxId' AS inbox, d.attempt, d.run_at, d.created_at
      FROM deliveries d JOIN events e ON e.id = d.event_id
      WHERE d.webhook_id = ${id} AND d.status = 'pending' ORDER BY d.run_at, d.id`;
    assert.deepEqual(
      queued.map((q) => q.inbox),
      ["inb_2", "inb_3", "inb_4", "inb_5"],
      "the claim's order: oldest first",
    );
    assert.ok(
      queued.every((q) => q.attempt === 1 && q.createdAt.getTime() === T0 + 100_000),
      "new first attempts, now",
    );
    assert.ok(queued.every((q) => T0 + 100_000 - q.runAt.getTime() <= 1), "all due now (microseconds apart)");
    assert.deepEqual(await recoverOk(f, id, { since: at(3) }, 202), { queued: 0 }, "their latest attempts are pending");

    // inb_3 and inb_4 fail again (retries queued: pending, so not recovered), the others succeed.
    healthy.add("inb_2").add("inb_5");
    await f.app.deps.deliveries.queue.drain();
    assert.deepEqual(await recoverOk(f, id, { since: at(3), dryRun: true }, 200), { wouldQueue: 0 });
    // Disabled by hand, the claim cancels their retries when due; enabled again, only those two are recovered.
    await patch(f, id, { active: false });
    f.clock.advance(11_000);
    await f.app.deps.deliveries.queue.drain();
    await patch(f, id, { active: true });
    assert.deepEqual(await recoverOk(f, id, { since: at(0) }, 202), { queued: 3 });
    const after = await attempts(f, id);
    assert.deepEqual(after.get("inb_3"), [[1, "failed"], [2, "cancelled"], [1, "failed"], [2, "cancelled"], [
      1,
      "pending",
    ]]);
    assert.deepEqual(after.get("inb_4"), [[1, "failed"], [2, "cancelled"], [1, "failed"], [2, "cancelled"], [
      1,
      "pending",
    ]]);
    assert.deepEqual(after.get("inb_before")?.at(-1), [1, "pending"], "since T0: the event before the window too");
    assert.deepEqual(after.get("inb_2")?.at(-1), [1, "succeeded"]);
    assert.equal(after.get("inb_ok")?.length, 1, "a success is never recovered");
    await f.app.deps.deliveries.queue.drain();
    healthy.add("inb_3").add("inb_4").add("inb_before");
    f.clock.advance(11_000);
    await f.app.deps.deliveries.queue.drain();
    assert.deepEqual(await recoverOk(f, id, { since: at(0), dryRun: true }, 200), { wouldQueue: 0 });
  } finally {
    await f.close();
  }
});

Deno.test("recover refuses a bad window with 400, another account's webhook with 404", async () => {
  const f = await deliveryFixture();
  try {
    const id = await createWebhook(f.app, f.user, f.receiver.url("/r"));
    for (
      const json of [
        {},
        { since: "yesterday" },
        { since: at(10), until: at(9) },
        { since: "0000-12-31T23:59:59Z" },
        { since: at(1), dryRun: "yes" },
        { since: at(1), other: 1 },
      ]
    ) {
      const error = await expectError(await recover(f, id, json), 400, "VALIDATION_ERROR");
      assert.ok(error.details?.length, JSON.stringify(error));
    }
    const until = await expectError(await recover(f, id, { since: at(10), until: at(9) }), 400, "VALIDATION_ERROR");
    assert.deepEqual(until.details, [{ path: "until", message: "Must not be before since" }]);
    assert.deepEqual(await recoverOk(f, id, { since: at(10), until: at(10) }, 202), { queued: 0 }, "one instant");
    await expectError(await recover(f, "wh_missing", { since: at(1) }), 404, "WEBHOOK_NOT_FOUND");
  } finally {
    await f.close();
  }
});

Deno.test("recover counts towards the redelivery limit as one call, whatever it queues", async () => {
  const f = await deliveryFixture({ env: { REDELIVERIES_PER_MINUTE: "pro=3" } });
  try {
    f.receiver.respond({ status: 500 });
    const id = await createWebhook(f.app, f.user, f.receiver.url("/limited"));
    for (let i = 0; i < 5; i++) await emitInboxCreated(f);
    await f.app.deps.deliveries.queue.drain();
    await patch(f, id, { active: true });
    const [attempt] = await f.db.sql<{ id: string }[]>`SELECT id FROM deliveries WHERE webhook_id = ${id} LIMIT 1`;
    const redeliver = await f.app.request(`/api/user-webhooks/${id}/deliveries/${attempt!.id}/redeliver`, {
      method: "POST",
      cookie: f.user.cookie,
    });
    assert.equal(redeliver.status, 202);
    await redeliver.body?.cancel();
    assert.deepEqual(await recoverOk(f, id, { since: at(-1), dryRun: true }, 200), { wouldQueue: 4 });
    assert.deepEqual(await recoverOk(f, id, { since: at(-1) }, 202), { queued: 4 });
    const refused = await recover(f, id, { since: at(-1) });
    await expectError(refused, 429, "RATE_LIMITED");
    assert.ok(Number(refused.headers.get("retry-after")) > 0);
  } finally {
    await f.close();
  }
});

Deno.test("a recover of 10,000 failed events queues them all in one statement, in the events' order", async () => {
  const f = await deliveryFixture();
  try {
    const id = await createWebhook(f.app, f.user, f.receiver.url("/many"));
    const n = 10_000;
    // Ten thousand events, each with one failed attempt on the webhook, a second apart.
    await f.db.sql`
      INSERT INTO events (id, account_id, type, payload, created_at, seq)
      SELECT 'evt_many_' || lpad(g::text, 5, '0'), ${f.user.id}, 'inbox.created', '{}',
        ${new Date(T0)}::timestamptz + g * interval '1 second', nextval('events_seq')
      FROM generate_series(1, ${n}) g`;
    await f.db.sql`
      INSERT INTO deliveries (id, event_id, webhook_id, attempt, status, run_at, created_at, finished_at, error)
      SELECT 'dlv_many_' || g, 'evt_many_' || lpad(g::text, 5, '0'), ${id}, 1, 'failed',
        ${new Date(T0)}::timestamptz + g * interval '1 second', ${new Date(T0)}::timestamptz + g * interval '1 second',
        ${new Date(T0)}::timestamptz + g * interval '1 second', 'HTTP 500'
      FROM generate_series(1, ${n}) g`;
    const db = interceptQueries(f.app.deps.sql, () => undefined);
    const outbox = createOutbox({ sql: db.sql, hub: f.app.deps.hub });
    const now = new Date(T0 + (n + 10) * 1_000);
    assert.equal(await outbox.recover(id, { since: new Date(T0), until: now }, now), n);
    assert.equal(db.queries(), 1, "one statement");
    const rows = await f.db.sql<{ eventId: string }[]>`
      SELECT event_id FROM deliveries WHERE webhook_id = ${id} AND status = 'pending' ORDER BY run_at, id`;
    assert.equal(rows.length, n);
    assert.ok(rows.every((r, i) => r.eventId === `evt_many_${String(i + 1).padStart(5, "0")}`), "oldest first");
  } finally {
    await f.close();
  }
});
