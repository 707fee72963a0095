/**
 * The delivery engine over the real path: events emitted in a transaction,
 * claimed from PostgreSQL, sent over TLS to a real HTTPS receiver, recorded.
 */
import assert from "node:assert/strict";
import { runSweeps } from "../../src/service/sweeps.ts";
import { createWebhook } from "../_helpers/app.ts";
import { hmacHex } from "../_helpers/hmac.ts";
import { freePort } from "../_helpers/ports.ts";
import { deliveryFixture, deliveryLog, emitInboxCreated, getWebhookJson } from "./_support.ts";

const SECRET = "whsec-test-secret-0123456789";

Deno.test("a delivery carries every header of spec 6.2 and a signature that verifies independently", async () => {
  const f = await deliveryFixture();
  try {
    const id = await createWebhook(f.app, f.user, f.receiver.url("/hook"), ["inbox.created"], SECRET);
    const eventId = await emitInboxCreated(f, "inb_sig");
    await f.app.deps.deliveries.queue.drain();
    const [req] = await f.receiver.waitFor(1);
    assert.equal(req!.method, "POST");
    assert.equal(req!.path, "/hook");
    assert.equal(req!.headers["content-type"], "application/json");
    assert.equal(req!.headers["user-agent"], "InboxService-Webhook/1.0");
    assert.equal(req!.headers["x-webhook-id"], id);
    assert.equal(req!.headers["x-webhook-event"], "inbox.created");
    assert.match(req!.headers["x-delivery-id"] ?? "", /^dlv_[0-9a-z]{26}$/);
    assert.equal(req!.headers["x-webhook-signature"], `sha256=${await hmacHex(SECRET, req!.body)}`);
    const body = JSON.parse(req!.body);
    assert.deepEqual(Object.keys(body).sort(), ["createdAt", "data", "id", "type"]);
    assert.equal(body.id, eventId);
    assert.equal(body.type, "inbox.created");
    assert.equal(body.createdAt, f.clock.now().toISOString());
    assert.equal(body.data.inboxId, "inb_sig");

    const webhook = await getWebhookJson(f, id);
    assert.equal(webhook.lastTriggeredAt, f.clock.now().toISOString());
    assert.equal(webhook.failureCount, 0);
    const log = await deliveryLog(f, id);
    assert.equal(log.length, 1);
    assert.equal(log[0]!.id, req!.headers["x-delivery-id"], "the log's id is the X-Delivery-ID");
    assert.equal(log[0]!.status, "succeeded");
    assert.equal(log[0]!.responseStatus, 200);
    assert.equal(log[0]!.eventId, eventId);
    assert.equal(log[0]!.attempt, 1);
  } finally {
    await f.close();
  }
});

Deno.test("a secret changed or removed by PATCH signs the very next delivery (no stale cached key)", async () => {
  const f = await deliveryFixture();
  try {
    const id = await createWebhook(f.app, f.user, f.receiver.url("/rotate"), ["inbox.created"], SECRET);
    const patch = async (secret: string | null) => {
      const res = await f.app.request(`/api/user-webhooks/${id}`, {
        method: "PATCH",
        json: { secret },
        cookie: f.user.cookie,
      });
      assert.equal(res.status, 200);
      await res.body?.cancel();
    };
    await emitInboxCreated(f);
    await f.app.deps.deliveries.queue.drain();
    const newSecret = "a-brand-new-secret-after-rotation";
    await patch(newSecret);
    await emitInboxCreated(f);
    await f.app.deps.deliveries.queue.drain();
    await patch(null);
    await emitInboxCreated(f);
    await f.app.deps.deliveries.queue.drain();
    const [first, second, third] = await f.receiver.waitFor(3);
    assert.equal(first!.headers["x-webhook-signature"], `sha256=${await hmacHex(SECRET, first!.body)}`);
    assert.equal(second!.headers["x-webhook-signature"], `sha256=${await hmacHex(newSecret, second!.body)}`);
    assert.equal(third!.headers["x-webhook-signature"], undefined, "no secret, no signature");
  } finally {
    await f.close();
  }
});

Deno.test("without a secret there is no signature header; another event type is not delivered", async () => {
  const f = await deliveryFixture();
  try {
    await createWebhook(f.app, f.user, f.receiver.url("/plain"));
    await createWebhook(f.app, f.user, f.receiver.url("/other"), ["message.received"]);
    await emitInboxCreated(f);
    await f.app.deps.deliveries.queue.drain();
    assert.equal(f.receiver.requests.length, 1);
    const req = f.receiver.requests[0]!;
    assert.equal(req.path, "/plain");
    assert.equal(req.headers["x-webhook-signature"], undefined);
    assert.equal(req.headers["webhook-signature"], undefined);
    assert.ok(req.headers["x-delivery-id"]);
  } finally {
    await f.close();
  }
});

Deno.test("a retry has a new X-Delivery-ID and the same event id; success resets failureCount", async () => {
  const f = await deliveryFixture();
  try {
    const id = await createWebhook(f.app, f.user, f.receiver.url("/hook"), ["inbox.created"], SECRET);
    f.receiver.respond((_req, i) => ({ status: i === 0 ? 500 : 200 }));
    await emitInboxCreated(f);
    await f.app.deps.deliveries.queue.drain();
    let webhook = await getWebhookJson(f, id);
    assert.equal(webhook.failureCount, 1);
    assert.equal(webhook.lastFailureReason, "HTTP 500");
    assert.equal(webhook.lastFailureAt, f.clock.now().toISOString());

    f.clock.advance(10_000);
    await f.app.deps.deliveries.queue.drain();
    const [first, second] = await f.receiver.waitFor(2);
    assert.notEqual(first!.headers["x-delivery-id"], second!.headers["x-delivery-id"]);
    assert.equal(first!.body, second!.body, "the same bytes, so the same event id");
    webhook = await getWebhookJson(f, id);
    assert.equal(webhook.failureCount, 0, "a success ends the run of failures");
    const log = await deliveryLog(f, id);
    assert.deepEqual(log.map((d) => [d.attempt, d.status, d.responseStatus]), [[2, "succeeded", 200], [
      1,
      "failed",
      500,
    ]]);
    assert.equal(log[1]!.error, "HTTP 500");
  } finally {
    await f.close();
  }
});

Deno.test("retry schedule with a fake clock: +10 s, +1 min, +5 min, +30 min, then disabled at the 5th failure", async () => {
  const f = await deliveryFixture();
  try {
    const id = await createWebhook(f.app, f.user, f.receiver.url("/down"));
    f.receiver.respond({ status: 503 });
    await emitInboxCreated(f);
    const queue = f.app.deps.deliveries.queue;
    assert.equal(await queue.runOnce(), 1);
    for (const [i, delay] of [10_000, 60_000, 300_000, 1_800_000].entries()) {
      f.clock.advance(delay - 1);
      assert.equal(await queue.runOnce(), 0, `attempt ${i + 2} is not due 1 ms early`);
      f.clock.advance(1);
      assert.equal(await queue.runOnce(), 1, `attempt ${i + 2} is due after ${delay} ms`);
    }
    assert.equal(f.receiver.requests.length, 5);
    const webhook = await getWebhookJson(f, id);
    assert.equal(webhook.active, false, "the 5th consecutive failure disables the webhook");
    assert.equal(webhook.failureCount, 5);
    const pending = await f.db.sql`SELECT count(*)::int AS n FROM deliveries WHERE status = 'pending'`;
    assert.equal(pending[0]!.n, 0, "no retry is left once disabled");

    // Deliveries stop: a new event queues nothing for an inactive webhook.
    f.clock.advance(7_200_000);
    await emitInboxCreated(f);
    await queue.drain();
    assert.equal(f.receiver.requests.length, 5);

    // Re-enabling resets the count, and deliveries flow again.
    const patch = await f.app.request(`/api/user-webhooks/${id}`, {
      method: "PATCH",
      json: { active: true },
      cookie: f.user.cookie,
    });
    assert.equal(patch.status, 200);
    await patch.body?.cancel();
    assert.equal((await getWebhookJson(f, id)).failureCount, 0);
    f.receiver.respond({ status: 200 });
    await emitInboxCreated(f);
    await queue.drain();
    assert.equal(f.receiver.requests.length, 6);
    assert.equal((await getWebhookJson(f, id)).active, true);
  } finally {
    await f.close();
  }
});

Deno.test("the 5th consecutive failure cancels the webhook's pending retries", async () => {
  const f = await deliveryFixture();
  try {
    const id = await createWebhook(f.app, f.user, f.receiver.url("/down"));
    f.receiver.respond({ status: 500 });
    for (let i = 0; i < 5; i++) await emitInboxCreated(f);
    await f.app.deps.deliveries.queue.drain();
    assert.equal(f.receiver.requests.length, 5);
    assert.equal((await getWebhookJson(f, id)).active, false);
    const rows = await f.db.sql<{ status: string; n: number }[]>`
      SELECT status, count(*)::int AS n FROM deliveries GROUP BY status ORDER BY status`;
    const counts = Object.fromEntries(rows.map((r) => [r.status, r.n]));
    assert.equal(counts.failed, 5);
    assert.equal(counts.pending, undefined, "nothing left to retry");
    assert.ok((counts.cancelled ?? 0) >= 1, "the retries scheduled before the 5th failure were cancelled");
    f.clock.advance(86_400_000);
    await f.app.deps.deliveries.queue.drain();
    assert.equal(f.receiver.requests.length, 5);
  } finally {
    await f.close();
  }
});

Deno.test("a 3xx is a failure and the redirect target is never requested", async () => {
  const f = await deliveryFixture();
  try {
    const id = await createWebhook(f.app, f.user, f.receiver.url("/moved"));
    f.receiver.respond((req) =>
      req.path === "/moved" ? { status: 302, headers: { location: f.receiver.url("/target") } } : { status: 200 }
    );
    await emitInboxCreated(f);
    await f.app.deps.deliveries.queue.drain();
    assert.deepEqual(f.receiver.requests.map((r) => r.path), ["/moved"]);
    const webhook = await getWebhookJson(f, id);
    assert.equal(webhook.failureCount, 1);
    assert.equal(webhook.lastFailureReason, "HTTP 302: redirect not followed");
  } finally {
    await f.close();
  }
});

Deno.test("a receiver slower than the timeout is a failure with a readable reason", async () => {
  const f = await deliveryFixture({ env: { DELIVERY_TIMEOUT_MS: "300" } });
  try {
    const id = await createWebhook(f.app, f.user, f.receiver.url("/slow"));
    f.receiver.respond({ delayMs: 3_000 });
    await emitInboxCreated(f);
    await f.app.deps.deliveries.queue.drain();
    const webhook = await getWebhookJson(f, id);
    assert.equal(webhook.lastFailureReason, "Timed out after 300 ms");
    const [retry, entry] = await deliveryLog(f, id);
    assert.deepEqual([retry!.attempt, retry!.status], [2, "pending"], "the retry is queued");
    assert.equal(entry!.status, "failed");
    assert.equal(entry!.responseStatus, null);
    assert.equal(entry!.error, "Timed out after 300 ms");
  } finally {
    await f.close();
  }
});

Deno.test("connection refused and an untrusted certificate are failures with their reason", async () => {
  const f = await deliveryFixture();
  try {
    const port = freePort();
    const id = await createWebhook(f.app, f.user, `https://localhost:${port}/hook`);
    await emitInboxCreated(f);
    await f.app.deps.deliveries.queue.drain();
    assert.equal((await getWebhookJson(f, id)).lastFailureReason, "Connection refused");

    const untrusted = Deno.serve({
      hostname: "127.0.0.1",
      port: 0,
      cert: await Deno.readTextFile(new URL("../_helpers/certs/untrusted.pem", import.meta.url)),
      key: await Deno.readTextFile(new URL("../_helpers/certs/untrusted.key", import.meta.url)),
      onListen: () => {},
    }, () => new Response("should never be reached"));
    try {
      const tlsId = await createWebhook(f.app, f.user, `https://localhost:${untrusted.addr.port}/hook`);
      await emitInboxCreated(f);
      await f.app.deps.deliveries.queue.drain();
      assert.match(String((await getWebhookJson(f, tlsId)).lastFailureReason), /^TLS error: /);
    } finally {
      await untrusted.shutdown();
    }
  } finally {
    await f.close();
  }
});

Deno.test("a name that now resolves to 127.0.0.1 (DNS rebinding) is refused without connecting", async () => {
  const f = await deliveryFixture();
  try {
    // Not a trusted host: registration checks its public answer.
    f.dns.set("rebind.test", ["93.184.216.34"]);
    const id = await createWebhook(f.app, f.user, `https://rebind.test:${f.receiver.port}/hook`);
    f.dns.set("rebind.test", ["127.0.0.1"]);
    await emitInboxCreated(f);
    await f.app.deps.deliveries.queue.drain();
    assert.equal(f.receiver.requests.length, 0, "the receiver on 127.0.0.1 was never contacted");
    const webhook = await getWebhookJson(f, id);
    assert.match(String(webhook.lastFailureReason), /^Unsafe address refused: .*127\.0\.0\.1/);
    assert.equal(webhook.failureCount, 1);

    // The test endpoint applies the same rule.
    const test = await f.app.request(`/api/user-webhooks/${id}/test`, { method: "POST", cookie: f.user.cookie });
    const result = await test.json();
    assert.equal(result.success, false);
    assert.equal(result.responseStatus, 0);
    assert.match(result.responseBody, /^Unsafe address refused/);
    assert.equal(f.receiver.requests.length, 0);
  } finally {
    await f.close();
  }
});

Deno.test("a name that does not resolve fails as a DNS failure, not as an unsafe address", async () => {
  const f = await deliveryFixture();
  try {
    // Accepted at registration (the name may be added to DNS later); no answer at delivery.
    const id = await createWebhook(f.app, f.user, `https://typo-in-name.example.net:${f.receiver.port}/hook`);
    await emitInboxCreated(f);
    await f.app.deps.deliveries.queue.drain();
    const webhook = await getWebhookJson(f, id);
    assert.equal(webhook.lastFailureReason, "Could not resolve host: typo-in-name.example.net");
    assert.equal(webhook.failureCount, 1);
    const failed = (await deliveryLog(f, id)).filter((e) => e.status === "failed");
    assert.deepEqual(failed.map((e) => e.error), ["Could not resolve host: typo-in-name.example.net"]);

    const test = await f.app.request(`/api/user-webhooks/${id}/test`, { method: "POST", cookie: f.user.cookie });
    const result = await test.json();
    assert.deepEqual(
      { success: result.success, responseStatus: result.responseStatus, responseBody: result.responseBody },
      { success: false, responseStatus: 0, responseBody: "Could not resolve host: typo-in-name.example.net" },
    );
    assert.equal(f.receiver.requests.length, 0);
  } finally {
    await f.close();
  }
});

Deno.test("test endpoint: a signed `test` event, the body cut at 500 characters, and no state change", async () => {
  const f = await deliveryFixture();
  try {
    const id = await createWebhook(f.app, f.user, f.receiver.url("/hook"), ["inbox.created"], SECRET);
    f.receiver.respond({ status: 200, body: "x".repeat(600) });
    const res = await f.app.request(`/api/user-webhooks/${id}/test`, { method: "POST", cookie: f.user.cookie });
    assert.equal(res.status, 200);
    const result = await res.json();
    assert.deepEqual(Object.keys(result).sort(), ["durationMs", "responseBody", "responseStatus", "success"]);
    assert.equal(result.success, true);
    assert.equal(result.responseStatus, 200);
    assert.equal(result.responseBody, "x".repeat(500));
    assert.ok(Number.isInteger(result.durationMs) && result.durationMs >= 0);
    const [req] = await f.receiver.waitFor(1);
    assert.equal(req!.headers["x-webhook-event"], "test");
    assert.equal(req!.headers["x-webhook-signature"], `sha256=${await hmacHex(SECRET, req!.body)}`);
    const body = JSON.parse(req!.body);
    assert.equal(body.type, "test");
    assert.equal(body.data.webhookId, id);

    // A failing receiver: reported in the 200 body, and still no state change.
    f.receiver.respond({ status: 500, body: "boom" });
    const failing = await (await f.app.request(`/api/user-webhooks/${id}/test`, {
      method: "POST",
      cookie: f.user.cookie,
    })).json();
    assert.deepEqual([failing.success, failing.responseStatus, failing.responseBody], [false, 500, "boom"]);
    const webhook = await getWebhookJson(f, id);
    assert.equal(webhook.failureCount, 0);
    assert.equal(webhook.lastTriggeredAt, null);
    assert.equal(webhook.lastFailureAt, null);
    assert.equal(webhook.active, true);
    assert.deepEqual(await deliveryLog(f, id), [], "test events are not in the delivery log");

    // It works on an inactive webhook too, and leaves it inactive.
    await (await f.app.request(`/api/user-webhooks/${id}`, {
      method: "PATCH",
      json: { active: false },
      cookie: f.user.cookie,
    })).body?.cancel();
    f.receiver.respond({ status: 202, body: "" });
    const inactive = await (await f.app.request(`/api/user-webhooks/${id}/test`, {
      method: "POST",
      cookie: f.user.cookie,
    })).json();
    assert.equal(inactive.success, true);
    assert.equal((await getWebhookJson(f, id)).active, false);

    const missing = await f.app.request(`/api/user-webhooks/wh_nope/test`, { method: "POST", cookie: f.user.cookie });
    assert.equal(missing.status, 404);
    assert.equal((await missing.json()).code, "WEBHOOK_NOT_FOUND");
  } finally {
    await f.close();
  }
});

Deno.test("test endpoint without an HTTP response: status 0 and the reason in responseBody", async () => {
  const f = await deliveryFixture();
  try {
    const port = freePort();
    const id = await createWebhook(f.app, f.user, `https://localhost:${port}/hook`);
    const result = await (await f.app.request(`/api/user-webhooks/${id}/test`, {
      method: "POST",
      cookie: f.user.cookie,
    })).json();
    assert.deepEqual(result.responseStatus, 0);
    assert.equal(result.responseBody, "Connection refused");
    assert.equal(result.success, false);
  } finally {
    await f.close();
  }
});

Deno.test("delivery log: newest first with cursor pagination; redelivery sends the same event again", async () => {
  const f = await deliveryFixture();
  try {
    const id = await createWebhook(f.app, f.user, f.receiver.url("/hook"));
    const events: string[] = [];
    for (let i = 0; i < 3; i++) {
      events.push(await emitInboxCreated(f));
      f.clock.advance(1000);
    }
    await f.app.deps.deliveries.queue.drain();
    const page1 = await (await f.app.request(`/api/user-webhooks/${id}/deliveries?limit=2`, { cookie: f.user.cookie }))
      .json();
    assert.deepEqual(page1.data.map((d: { eventId: string }) => d.eventId), [events[2], events[1]]);
    assert.equal(typeof page1.nextCursor, "string");
    const page2 = await (await f.app.request(
      `/api/user-webhooks/${id}/deliveries?limit=2&cursor=${encodeURIComponent(page1.nextCursor)}`,
      { cookie: f.user.cookie },
    )).json();
    assert.deepEqual(page2.data.map((d: { eventId: string }) => d.eventId), [events[0]]);
    assert.equal(page2.nextCursor, null);
    for (const bad of ["?cursor=nonsense", "?limit=0", "?limit=101", "?limit=abc"]) {
      const res = await f.app.request(`/api/user-webhooks/${id}/deliveries${bad}`, { cookie: f.user.cookie });
      assert.equal(res.status, 400, bad);
      assert.equal((await res.json()).code, "VALIDATION_ERROR");
    }

    const original = page2.data[0];
    const redo = await f.app.request(`/api/user-webhooks/${id}/deliveries/${original.id}/redeliver`, {
      method: "POST",
      cookie: f.user.cookie,
    });
    assert.equal(redo.status, 202);
    const queued = await redo.json();
    assert.equal(queued.status, "pending");
    assert.equal(queued.eventId, events[0]);
    assert.notEqual(queued.id, original.id);
    await f.app.deps.deliveries.queue.drain();
    const last = f.receiver.requests.at(-1)!;
    assert.equal(last.headers["x-delivery-id"], queued.id);
    assert.equal(JSON.parse(last.body).id, events[0], "the same event, so receivers can de-duplicate");

    const unknown = await f.app.request(`/api/user-webhooks/${id}/deliveries/dlv_nope/redeliver`, {
      method: "POST",
      cookie: f.user.cookie,
    });
    assert.equal(unknown.status, 404);
    assert.deepEqual(await unknown.json(), { success: false, error: "Delivery not found", code: "DELIVERY_NOT_FOUND" });

    await (await f.app.request(`/api/user-webhooks/${id}`, {
      method: "PATCH",
      json: { active: false },
      cookie: f.user.cookie,
    })).body?.cancel();
    const inactive = await f.app.request(`/api/user-webhooks/${id}/deliveries/${original.id}/redeliver`, {
      method: "POST",
      cookie: f.user.cookie,
    });
    assert.equal(inactive.status, 400);
    assert.equal((await inactive.json()).code, "WEBHOOK_INACTIVE");
  } finally {
    await f.close();
  }
});

Deno.test("another account can neither read the log of nor redeliver or test someone else's webhook", async () => {
  const f = await deliveryFixture();
  try {
    const id = await createWebhook(f.app, f.user, f.receiver.url("/hook"));
    await emitInboxCreated(f);
    await f.app.deps.deliveries.queue.drain();
    const [entry] = await deliveryLog(f, id);
    const { newUser } = await import("../_helpers/app.ts");
    const other = await newUser(f.app, "pro");
    for (
      const [method, path] of [
        ["GET", `/api/user-webhooks/${id}/deliveries`],
        ["POST", `/api/user-webhooks/${id}/deliveries/${entry!.id}/redeliver`],
        ["POST", `/api/user-webhooks/${id}/test`],
      ]
    ) {
      const res = await f.app.request(path!, { method, cookie: other.cookie });
      assert.equal(res.status, 404, `${method} ${path}`);
      assert.equal((await res.json()).error, "Webhook not found");
    }
    assert.equal(f.receiver.requests.length, 1);
  } finally {
    await f.close();
  }
});

Deno.test("a crashed worker's claim is taken over when its lease runs out", async () => {
  const f = await deliveryFixture();
  try {
    await createWebhook(f.app, f.user, f.receiver.url("/hook"));
    await emitInboxCreated(f);
    // Another worker claimed it and died: in flight, lease in the future.
    const leaseUntil = new Date(f.clock.now().getTime() + 15_000);
    await f.db.sql`UPDATE deliveries SET status = 'in_flight', claimed_by = 'dead-worker', lease_until = ${leaseUntil}`;
    assert.equal(await f.app.deps.deliveries.queue.runOnce(), 0, "a live lease is respected");
    f.clock.advance(15_001);
    assert.equal(await f.app.deps.deliveries.queue.runOnce(), 1, "an expired lease is claimed again");
    assert.equal(f.receiver.requests.length, 1);
    const rows = await f.db.sql`SELECT status, claimed_by FROM deliveries`;
    assert.equal(rows[0]!.status, "succeeded");
    assert.notEqual(rows[0]!.claimedBy, "dead-worker");
  } finally {
    await f.close();
  }
});

Deno.test("the sweep purges delivery records older than the retention", async () => {
  const f = await deliveryFixture({ env: { DELIVERY_RETENTION_DAYS: "2", EVENT_RETENTION_DAYS: "2" } });
  try {
    await createWebhook(f.app, f.user, f.receiver.url("/hook"));
    await emitInboxCreated(f);
    await f.app.deps.deliveries.queue.drain();
    f.clock.advance(86_400_000);
    await emitInboxCreated(f);
    await f.app.deps.deliveries.queue.drain();
    f.clock.advance(86_400_000 + 1000);
    await runSweeps(f.app.deps.sweeps, f.clock.now());
    const left = await f.db.sql`SELECT count(*)::int AS n FROM deliveries`;
    assert.equal(left[0]!.n, 1, "only the record younger than 2 days remains");
    const events = await f.db.sql`SELECT count(*)::int AS n FROM events`;
    assert.equal(events[0]!.n, 1, "events past their own retention without deliveries go too");
  } finally {
    await f.close();
  }
});

Deno.test("the event log keeps EVENT_RETENTION_DAYS, and an event as long as a kept delivery record refers to it", async () => {
  const f = await deliveryFixture({ env: { DELIVERY_RETENTION_DAYS: "10", EVENT_RETENTION_DAYS: "3" } });
  try {
    await emitInboxCreated(f); // no webhook yet: an event with no delivery
    await createWebhook(f.app, f.user, f.receiver.url("/hook"));
    await emitInboxCreated(f); // with a delivery record
    await f.app.deps.deliveries.queue.drain();
    f.clock.advance(3 * 86_400_000 + 1000);
    await runSweeps(f.app.deps.sweeps, f.clock.now());
    const kept = await f.db.sql`SELECT e.id FROM events e JOIN deliveries d ON d.event_id = e.id`;
    const all = await f.db.sql`SELECT id FROM events`;
    assert.equal(all.length, 1, "the event without deliveries is gone after 3 days");
    assert.deepEqual(all.map((r) => r.id), kept.map((r) => r.id), "the one a delivery record refers to stays");
  } finally {
    await f.close();
  }
});

Deno.test("graceful stop lets an attempt in flight finish and record its result", async () => {
  const f = await deliveryFixture({ startDeliveries: true });
  try {
    await createWebhook(f.app, f.user, f.receiver.url("/hook"));
    f.receiver.respond({ delayMs: 400 });
    await emitInboxCreated(f);
    await f.receiver.waitFor(1);
    await f.app.deps.deliveries.stop();
    const rows = await f.db.sql`SELECT status FROM deliveries`;
    assert.deepEqual(rows.map((r) => r.status), ["succeeded"]);
  } finally {
    await f.close();
  }
});

Deno.test("metrics count outcomes and expose the queue depth", async () => {
  const f = await deliveryFixture();
  try {
    await createWebhook(f.app, f.user, f.receiver.url("/hook"));
    await emitInboxCreated(f);
    await emitInboxCreated(f);
    let text = await (await f.app.request("/metrics")).text();
    assert.match(text, /delivery_queue_depth 2/);
    await f.app.deps.deliveries.queue.drain();
    text = await (await f.app.request("/metrics")).text();
    assert.match(text, /deliveries_total\{outcome="succeeded"\} 2/);
    assert.match(text, /delivery_queue_depth 0/);
    assert.match(text, /delivery_attempt_duration_seconds_count\{result="success"\} 2/);
    assert.match(text, /delivery_oldest_pending_age_seconds 0/);
  } finally {
    await f.close();
  }
});
