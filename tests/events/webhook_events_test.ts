/**
 * The operational events about webhooks, over the real path: the 5th
 * consecutive failure of real deliveries to a real HTTPS receiver disables
 * the webhook and appends `webhook.disabled` in the same statement (a failed
 * append leaves the webhook as it was), which the log and the stream carry;
 * enabling a disabled webhook appends `webhook.enabled`; nothing else does.
 * Neither is subscribable, nor seen by a key restricted to some inboxes, and
 * recording a disabling waits for, never deadlocks with, a PATCH of the
 * account.
 */
import assert from "node:assert/strict";
import { recordResults } from "../../src/deliveries/result_writer.ts";
import { newEvent } from "../../src/deliveries/outbox.ts";
import type * as repo from "../../src/deliveries/repo.ts";
import type { Tx } from "../../src/db/client.ts";
import { createWebhook, getJson } from "../_helpers/app.ts";
import { openSse } from "../_helpers/sse.ts";
import { sleep } from "../_helpers/wait.ts";
import { body, expectError } from "../_helpers/expect.ts";
import { claimExactly, type DeliveryFixture, deliveryFixture, emitInboxCreated } from "../deliveries/_support.ts";

type Envelope = { id: string; type: string; createdAt: string; data: Record<string, unknown> };

/** The account's log (first page), oldest first, of the given types (all when empty). */
async function log(f: DeliveryFixture, types = "", cookie = f.user.cookie): Promise<Envelope[]> {
  const res = await f.app.request(`/api/events?limit=100${types ? `&types=${types}` : ""}`, { cookie });
  const json = await body(res);
  assert.equal(res.status, 200, JSON.stringify(json));
  return json.data as Envelope[];
}

async function patch(f: DeliveryFixture, id: string, json: unknown): Promise<void> {
  const res = await f.app.request(`/api/user-webhooks/${id}`, { method: "PATCH", json, cookie: f.user.cookie });
  assert.equal(res.status, 200, JSON.stringify(await body(res)));
}

Deno.test("the 5th consecutive failure disables the webhook and webhook.disabled is in the log and on the stream", async () => {
  const f = await deliveryFixture();
  try {
    const stream = await openSse(`${f.app.baseUrl}/api/events/stream?types=webhook.disabled,webhook.enabled`, {
      cookie: f.user.cookie,
    });
    f.receiver.respond({ status: 500, body: "down" });
    const url = f.receiver.url("/failing");
    const id = await createWebhook(f.app, f.user, url);
    for (let i = 0; i < 4; i++) await emitInboxCreated(f);
    await f.app.deps.deliveries.queue.drain();
    assert.equal((await getJson(f.app, f.user, `/api/user-webhooks/${id}`)).json.failureCount, 4);
    assert.deepEqual(await log(f, "webhook.disabled"), [], "four failures disable nothing");

    await emitInboxCreated(f);
    await f.app.deps.deliveries.queue.drain();
    const webhook = (await getJson(f.app, f.user, `/api/user-webhooks/${id}`)).json;
    assert.equal(webhook.active, false);
    const disabled = await log(f, "webhook.disabled");
    assert.equal(disabled.length, 1);
    assert.deepEqual(Object.keys(disabled[0]!), ["id", "type", "createdAt", "data"]);
    assert.deepEqual(disabled[0]!.data, {
      webhookId: id,
      url,
      failureCount: 5,
      lastFailureReason: "HTTP 500",
      disabledAt: webhook.lastFailureAt,
    });
    assert.equal(disabled[0]!.createdAt, webhook.lastFailureAt);
    const all = await log(f);
    assert.deepEqual(all.map((e) => e.type), [...Array(5).fill("inbox.created"), "webhook.disabled"], "in log order");

    await stream.waitForFrames(1);
    const [frame] = stream.frames();
    assert.equal(frame!.event, "webhook.disabled");
    assert.equal(frame!.id, disabled[0]!.id);
    assert.deepEqual(JSON.parse(frame!.data), disabled[0]);

    // Enabling it again: webhook.enabled, once; enabling an active webhook emits nothing.
    f.clock.advance(1_000);
    await patch(f, id, { active: true });
    await patch(f, id, { active: true });
    await patch(f, id, { events: ["inbox.created", "inbox.expired"] });
    const enabled = await log(f, "webhook.enabled");
    assert.equal(enabled.length, 1);
    assert.deepEqual(enabled[0]!.data, { webhookId: id, url, enabledAt: f.clock.now().toISOString() });
    await stream.waitForFrames(2);
    assert.deepEqual(stream.frames().map((fr) => fr.event), ["webhook.disabled", "webhook.enabled"]);

    // Disabled by hand and enabled again: inactive to active, so once more; disabling by hand emits nothing.
    await patch(f, id, { active: false });
    await patch(f, id, { active: true, url: f.receiver.url("/moved") });
    const again = await log(f, "webhook.enabled,webhook.disabled");
    assert.deepEqual(again.map((e) => e.type), ["webhook.disabled", "webhook.enabled", "webhook.enabled"]);
    assert.equal(again[2]!.data.url, f.receiver.url("/moved"), "the URL the webhook has now");
    stream.close();
  } finally {
    await f.close();
  }
});

Deno.test("webhook events: none for webhooks otherwise, not subscribable, not seen by a key restricted to an inbox", async () => {
  const f = await deliveryFixture();
  try {
    const id = await createWebhook(f.app, f.user, f.receiver.url("/ok"));
    await emitInboxCreated(f);
    await f.app.deps.deliveries.queue.drain();
    await patch(f, id, { secret: "a-new-secret-0123456789" });
    await f.app.request(`/api/user-webhooks/${id}/test`, { method: "POST", cookie: f.user.cookie }).then(body);
    await f.app.request(`/api/user-webhooks/${id}`, { method: "DELETE", cookie: f.user.cookie }).then(body);
    assert.deepEqual((await log(f)).map((e) => e.type), ["inbox.created"], "creation, success, PATCH, test, deletion");

    for (const events of [["webhook.disabled"], ["inbox.created", "webhook.enabled"]]) {
      const res = await f.app.request("/api/user-webhooks", {
        method: "POST",
        json: { url: f.receiver.url("/sub"), events },
        cookie: f.user.cookie,
      });
      await expectError(res, 400, "VALIDATION_ERROR", "Invalid URL (must be HTTPS) or events");
    }

    // A webhook that fails five times, then a key that reaches one inbox only: it sees none of this.
    f.receiver.respond({ status: 503 });
    await createWebhook(f.app, f.user, f.receiver.url("/down"));
    for (let i = 0; i < 5; i++) await emitInboxCreated(f);
    await f.app.deps.deliveries.queue.drain();
    assert.equal((await log(f, "webhook.disabled")).length, 1);
    const inbox = await body(
      await f.app.request("/api/inboxes", { method: "POST", json: {}, cookie: f.user.cookie }),
    ) as { id: string };
    const res = await f.app.request("/api/api-keys", {
      method: "POST",
      json: { name: "one-inbox", scopes: ["events:read"], inboxIds: [inbox.id] },
      cookie: f.user.cookie,
    });
    const { key } = await body(res) as { key: string };
    const seen = await f.app.request("/api/events?limit=100", { auth: key });
    assert.deepEqual(((await body(seen)).data as Envelope[]).map((e) => e.type), ["inbox.created"], "its inbox only");
    const typed = await f.app.request("/api/events?types=webhook.disabled", { auth: key });
    assert.deepEqual((await body(typed)).data, []);
  } finally {
    await f.close();
  }
});

/** A webhook at `failures` consecutive failures, and one attempt of it claimed by "me". */
async function oneClaimed(f: DeliveryFixture, failures: number): Promise<{ webhookId: string; attempt: string }> {
  const webhookId = await createWebhook(f.app, f.user, f.receiver.url("/locks"));
  await f.db.sql`UPDATE webhooks SET failure_count = ${failures} WHERE id = ${webhookId}`;
  const eventId = await emitInboxCreated(f);
  const [row] = await f.db.sql<{ id: string }[]>`SELECT id FROM deliveries WHERE event_id = ${eventId}`;
  await claimExactly(f, [row!.id], "me", new Date(f.clock.now().getTime() + 60_000));
  return { webhookId, attempt: row!.id };
}

/** The failure of `attempt` as the dispatcher hands it over, its event on `accountId`. */
function failureOf(f: DeliveryFixture, webhookId: string, attempt: string, accountId: string): repo.ResultToRecord {
  const now = f.clock.now();
  return {
    ok: false,
    result: {
      id: attempt,
      worker: "me",
      url: "https://hooks.test/",
      responseStatus: 500,
      durationMs: 2,
      error: "HTTP 500",
      responseBody: "",
      finishedAt: now,
    },
    retry: undefined,
    disabling: {
      accountId,
      ref: attempt,
      event: newEvent("webhook.disabled", {
        webhookId,
        url: "https://localhost/locks",
        failureCount: 5,
        lastFailureReason: "HTTP 500",
        disabledAt: now.toISOString(),
      }, now),
    },
  };
}

Deno.test("the disabling and its event are one statement: an append that fails leaves the webhook as it was", async () => {
  const f = await deliveryFixture();
  try {
    const { webhookId, attempt } = await oneClaimed(f, 4);
    // An event on an account that does not exist: its insert fails, and with it the whole statement.
    await assert.rejects(recordResults(f.app.deps, "me", 5, [failureOf(f, webhookId, attempt, "acc_missing")]));
    const [hook] = await f.db.sql`SELECT active, failure_count FROM webhooks WHERE id = ${webhookId}`;
    assert.deepEqual([hook!.active, hook!.failureCount], [true, 4], "not disabled without its event");
    const [row] = await f.db.sql`SELECT status FROM deliveries WHERE id = ${attempt}`;
    assert.equal(row!.status, "pending", "the attempt is not recorded either");

    const recorded = await recordResults(f.app.deps, "me", 5, [failureOf(f, webhookId, attempt, f.user.id)]);
    assert.equal(recorded.get(attempt), "disabled");
    assert.equal((await log(f, "webhook.disabled")).length, 1);
  } finally {
    await f.close();
  }
});

/**
 * A transaction of another session that runs `first`, then waits for
 * `release()` to run `then` and commit: `held` resolves once `first` is done,
 * `done` once it has committed.
 */
function holding(f: DeliveryFixture, first: (tx: Tx) => Promise<unknown>, then: (tx: Tx) => Promise<unknown>) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => release = resolve);
  let held!: () => void;
  const isHeld = new Promise<void>((resolve) => held = resolve);
  const done = f.db.sql.begin(async (tx) => {
    await first(tx);
    held();
    await released;
    await then(tx);
  });
  return { held: isHeld, release, done };
}

Deno.test("recording a disabling waits for a PATCH that holds the account, and the two never deadlock", async () => {
  const f = await deliveryFixture();
  try {
    const { webhookId, attempt } = await oneClaimed(f, 4);
    // As PATCH /api/user-webhooks/{id} does: the account FOR UPDATE, then the webhook's row.
    const patch = holding(
      f,
      (tx) => tx`SELECT 1 FROM accounts WHERE id = ${f.user.id} FOR UPDATE`,
      (tx) => tx`UPDATE webhooks SET events = events WHERE id = ${webhookId}`,
    );
    await patch.held;
    const recording = recordResults(f.app.deps, "me", 5, [failureOf(f, webhookId, attempt, f.user.id)]);
    // Long enough for the recording to lock whatever it locks before the account: were it the webhook's row,
    // the PATCH's update below would wait for it while it waits for the account, which PostgreSQL reports
    // as a deadlock and ends by failing one of the two.
    await sleep(300);
    patch.release();
    await patch.done;
    assert.equal((await recording).get(attempt), "disabled");
    assert.equal((await log(f, "webhook.disabled")).length, 1);
  } finally {
    await f.close();
  }
});

Deno.test("recording a disabling waits for an emitter that holds the account's log, and the two never deadlock", async () => {
  const f = await deliveryFixture();
  try {
    const { webhookId, attempt } = await oneClaimed(f, 4);
    const eventId = await emitInboxCreated(f);
    // As the outbox's statement does (events/repo.ts appendEventsCtes): the account's advisory lock, then the
    // first attempts of its events, whose foreign key locks the webhook's row FOR KEY SHARE.
    const emitter = holding(
      f,
      (tx) => tx`SELECT pg_advisory_xact_lock(hashtextextended(${"events:" + f.user.id}, 0))`,
      (tx) =>
        tx`INSERT INTO deliveries (id, event_id, webhook_id, attempt, status, run_at, created_at)
          VALUES ('dlv_emitter', ${eventId}, ${webhookId}, 1, 'pending', now(), now())`,
    );
    await emitter.held;
    const recording = recordResults(f.app.deps, "me", 5, [failureOf(f, webhookId, attempt, f.user.id)]);
    // The recording locks the webhook's row and waits for the advisory lock: were its lock FOR UPDATE, the
    // emitter's foreign-key check would wait for it in turn.
    await sleep(300);
    emitter.release();
    await emitter.done;
    assert.equal((await recording).get(attempt), "disabled");
    assert.equal((await log(f, "webhook.disabled")).length, 1);
  } finally {
    await f.close();
  }
});
