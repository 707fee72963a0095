/**
 * Log lines carry their context: every line written while serving a request
 * has its request id, and every line of a delivery attempt has the delivery
 * and webhook ids, without the code that logs passing them along.
 */
import assert from "node:assert/strict";
import { createWebhook } from "../_helpers/app.ts";
import { capturedLogs } from "../_helpers/log_capture.ts";
import { waitUntil } from "../_helpers/wait.ts";
import { deliveryFixture, emitInboxCreated } from "../deliveries/_support.ts";

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
    await waitUntil(
      () => capturedLogs.slice(from).some((r) => r.level === "warning"),
      5_000,
      () => "no warning logged",
    );
    const warning = capturedLogs.slice(from).find((r) => r.level === "warning")!;
    assert.ok(typeof warning.properties.deliveryId === "string", "the failure names its delivery");
    assert.equal(warning.properties.requestId, undefined, "the request only woke the queue: not its line");
  } finally {
    await f.close();
  }
});
