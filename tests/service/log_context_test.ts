/**
 * Log lines carry their context: every line written while serving a request
 * has its request id, and every line of a delivery attempt has the delivery
 * and webhook ids, without the code that logs passing them along.
 */
import assert from "node:assert/strict";
import { type LogRecord, withContext } from "@logtape/logtape";
import { deliver } from "../../src/deliveries/dispatcher.ts";
import { createWebhook } from "../_helpers/app.ts";
import { capturedLogs } from "../_helpers/log_capture.ts";
import { waitUntil } from "../_helpers/wait.ts";
import { withService } from "../_helpers/harness.ts";
import { sendMail } from "../messages/_support.ts";
import { claimExactly, deliveryFixture, emitInboxCreated } from "../deliveries/_support.ts";

const SECRET = "whsec-never-in-a-log-0123456789";

/** A record as one text: its message parts and properties. */
function recordText(r: LogRecord): string {
  return JSON.stringify({ m: r.message, p: r.properties });
}

/** The first warning logged from index `from` of the captured logs on, once there is one (within 5 s). */
async function firstWarningSince(from: number): Promise<LogRecord> {
  await waitUntil(
    () => capturedLogs.slice(from).some((r) => r.level === "warning"),
    5_000,
    () => "no warning logged",
  );
  return capturedLogs.slice(from).find((r) => r.level === "warning")!;
}

Deno.test("every line written while serving a request carries its request id", async () => {
  const f = await deliveryFixture();
  try {
    const requestId = `req-${crypto.randomUUID()}`;
    const from = capturedLogs.length;
    const res = await f.app.request("/api/user-webhooks", {
      method: "POST",
      json: { url: "https://localhost/x", events: ["inbox.created"] },
      cookie: f.user.cookie,
      headers: { "x-request-id": requestId },
    });
    await res.body?.cancel();
    const lines = capturedLogs.slice(from).filter((r) => r.properties.requestId === requestId);
    assert.ok(lines.some((r) => r.category.join(".") === "inbox.http"), "the access line has the request id");
    assert.equal(res.headers.get("x-request-id"), requestId);
  } finally {
    await f.close();
  }
});

Deno.test("a failed delivery is logged as a warning with its delivery id and webhook id", async () => {
  const f = await deliveryFixture();
  try {
    f.receiver.respond({ status: 503 });
    const created = await f.app.request("/api/user-webhooks", {
      method: "POST",
      json: { url: f.receiver.url("/down"), events: ["inbox.created"] },
      cookie: f.user.cookie,
    });
    assert.equal(created.status, 201);
    const webhookId = (await created.json()).id;
    const eventId = await emitInboxCreated(f);
    const from = capturedLogs.length;
    await f.app.deps.deliveries.queue.runOnce();
    const [attempt] = await f.db.sql<{ id: string }[]>`
      SELECT id FROM deliveries WHERE event_id = ${eventId} AND attempt = 1`;
    const warning = capturedLogs.slice(from).find((r) => r.level === "warning" && r.properties.eventId === eventId);
    assert.ok(warning, "the failure is logged");
    assert.equal(warning.properties.deliveryId, attempt!.id);
    assert.equal(warning.properties.webhookId, webhookId);
    assert.equal(warning.properties.reason, "HTTP 503");
    assert.equal(warning.properties.recorded, "retry_scheduled");
  } finally {
    await f.close();
  }
});

Deno.test("a delivery that a request woke logs with its delivery id, never with the request's id", async () => {
  const f = await deliveryFixture({ startDeliveries: true });
  try {
    f.receiver.respond({ status: 503 });
    await createWebhook(f.app, f.user, f.receiver.url("/down"));
    const requestId = `req-${crypto.randomUUID()}`;
    const from = capturedLogs.length;
    // Creating an inbox emits inbox.created; the outbox wakes the queue from inside the request.
    const res = await f.app.request("/api/inboxes", {
      method: "POST",
      json: {},
      cookie: f.user.cookie,
      headers: { "x-request-id": requestId },
    });
    assert.equal(res.status, 201);
    await res.body?.cancel();
    const warning = await firstWarningSince(from);
    assert.ok(typeof warning.properties.deliveryId === "string", "the failure names its delivery");
    assert.equal(warning.properties.requestId, undefined, "the request only woke the queue: not its line");
  } finally {
    await f.close();
  }
});

Deno.test("a line a request handler writes carries the request id, as the access line does", async () => {
  const f = await deliveryFixture();
  try {
    const webhookId = await createWebhook(f.app, f.user, f.receiver.url("/ok"), ["inbox.created"]);
    await emitInboxCreated(f);
    await f.app.deps.deliveries.queue.runOnce();
    const [delivery] = await f.db.sql<{ id: string; eventId: string }[]>`
      SELECT id, event_id FROM deliveries WHERE webhook_id = ${webhookId}`;

    const requestId = `req-${crypto.randomUUID()}`;
    const from = capturedLogs.length;
    const res = await f.app.request(`/api/user-webhooks/${webhookId}/deliveries/${delivery!.id}/redeliver`, {
      method: "POST",
      cookie: f.user.cookie,
      headers: { "x-request-id": requestId },
    });
    assert.equal(res.status, 202);
    const queued = await res.json();
    const line = capturedLogs.slice(from).find((r) => r.properties.of === delivery!.id);
    assert.ok(line, "the redelivery is logged");
    assert.equal(line.level, "info");
    assert.equal(line.properties.requestId, requestId, "the handler's line carries the request id");
    assert.equal(line.properties.deliveryId, queued.id);
    assert.equal(line.properties.eventId, delivery!.eventId);
    assert.equal(line.properties.webhookId, webhookId);

    // The test endpoint's line too, with another request's id.
    const testRequestId = `req-${crypto.randomUUID()}`;
    const mark = capturedLogs.length;
    const tested = await f.app.request(`/api/user-webhooks/${webhookId}/test`, {
      method: "POST",
      cookie: f.user.cookie,
      headers: { "x-request-id": testRequestId },
    });
    assert.equal(tested.status, 200);
    await tested.body?.cancel();
    const testLine = capturedLogs.slice(mark).find((r) =>
      r.properties.requestId === testRequestId && r.level === "info" &&
      r.category.join(".") === "inbox.deliveries"
    );
    assert.ok(testLine, "the test event is logged with the request id");
    assert.equal(testLine.properties.outcome, "HTTP 200");
  } finally {
    await f.close();
  }
});

Deno.test("a failed attempt to a receiver answering 500 logs a warning with webhook, delivery, attempt and reason; never the secret or the body", async () => {
  const f = await deliveryFixture();
  try {
    f.receiver.respond({ status: 500, body: "receiver is down" });
    const webhookId = await createWebhook(f.app, f.user, f.receiver.url("/down"), ["inbox.created"], SECRET);
    const eventId = await emitInboxCreated(f);
    const queue = f.app.deps.deliveries.queue;
    const from = capturedLogs.length;
    assert.equal(await queue.runOnce(), 1);
    f.clock.advance(60_000);
    assert.equal(await queue.runOnce(), 1, "the retry");
    const attempts = await f.db.sql<{ id: string; attempt: number }[]>`
      SELECT id, attempt FROM deliveries WHERE event_id = ${eventId} AND status = 'failed' ORDER BY attempt`;
    const warnings = capturedLogs.slice(from).filter((r) => r.level === "warning" && r.properties.eventId === eventId);
    assert.deepEqual(
      warnings.map((w) => [w.properties.webhookId, w.properties.deliveryId, w.properties.attempt, w.properties.reason]),
      attempts.map((a) => [webhookId, a.id, a.attempt, "HTTP 500"]),
      "one warning per failed attempt",
    );
    assert.equal(warnings[0]!.properties.accountId, f.user.id);
    const body = f.receiver.requests[0]!.body;
    for (const w of warnings) {
      const text = recordText(w);
      assert.ok(!text.includes(SECRET), "never the secret");
      assert.ok(!text.includes(body) && !text.includes(JSON.parse(body).data.address), "never the body");
      assert.ok(!text.includes("receiver is down"), "nor the receiver's answer");
    }
  } finally {
    await f.close();
  }
});

Deno.test("the failure that disables a webhook logs one error naming it; attempts failing after it do not", async () => {
  const f = await deliveryFixture();
  try {
    f.receiver.respond({ status: 500 });
    const webhookId = await createWebhook(f.app, f.user, f.receiver.url("/down"), ["inbox.created"], SECRET);
    for (let i = 0; i < 6; i++) await emitInboxCreated(f);
    // Six attempts in flight at once: the fifth failure disables the webhook, the sixth finishes after it.
    const dispatcher = f.app.deps.deliveries.dispatcher;
    const ids = (await f.db.sql<{ id: string }[]>`SELECT id FROM deliveries ORDER BY seq`).map((r) => r.id);
    const claimed = await claimExactly(f, ids, dispatcher.worker, new Date(f.clock.now().getTime() + 60_000));
    const from = capturedLogs.length;
    const recorded: string[] = [];
    for (const d of claimed) {
      // As the queue runs each attempt: with its ids as log context.
      recorded.push(
        (await withContext({ deliveryId: d.id, webhookId: d.webhookId }, () => deliver(dispatcher, d)))
          .recorded,
      );
    }
    assert.deepEqual(recorded, [...Array(4).fill("retry_scheduled"), "disabled", "failed_final"]);
    const errors = capturedLogs.slice(from).filter((r) => r.level === "error");
    assert.equal(errors.length, 1, errors.map(recordText).join("\n"));
    const [error] = errors;
    assert.equal(error!.properties.webhookId, webhookId);
    assert.equal(error!.properties.accountId, f.user.id);
    assert.equal(error!.properties.failures, 5);
    assert.equal(error!.properties.deliveryId, claimed[4]!.id, "the attempt that disabled it");
    assert.match(recordText(error!), /disabled after/);
    assert.ok(!recordText(error!).includes(SECRET));
  } finally {
    await f.close();
  }
});

Deno.test("a delivery that a mail woke logs with its delivery id, never with the SMTP session's id", async () => {
  await withService({ receiver: true, smtp: true, user: "pro", startDeliveries: true }, async (h) => {
    h.receiver.respond({ status: 503 });
    await createWebhook(h.app, h.user, h.receiver.url("/down"), ["message.received"]);
    const created = await h.app.request("/api/inboxes", { method: "POST", json: {}, cookie: h.user.cookie });
    const inbox = await created.json();
    const from = capturedLogs.length;
    await sendMail(h.smtp.port, { to: inbox.address, subject: "wakes a delivery", text: "x" });
    const warning = await firstWarningSince(from);
    assert.ok(typeof warning.properties.deliveryId === "string", "the failure names its delivery");
    assert.equal(warning.properties.smtpSession, undefined, "the mail only woke the queue: not its line");
  });
});
