/**
 * The delivery log as a user debugging a receiver reads it: for each attempt
 * the URL it went to, the exact body it sent (what the signature covers), the
 * start of the receiver's answer, and for a pending retry when it will run.
 * Over the real path: the queue claims from PostgreSQL and sends over TLS to
 * a real HTTPS receiver; the log is read over HTTP.
 */
import assert from "node:assert/strict";
import { createWebhook } from "../_helpers/app.ts";
import { hmacHex } from "../_helpers/hmac.ts";
import { freePort } from "../_helpers/ports.ts";
import { retryDelayMs } from "../../src/deliveries/retry_schedule.ts";
import { deliveryFixture, deliveryLog, emitInboxCreated } from "./_support.ts";

const SECRET = "whsec-log-secret-0123456789";

Deno.test("the log gives each attempt's url, exact signed request body, response body and next attempt time", async () => {
  const f = await deliveryFixture();
  try {
    const first = f.receiver.url("/v1");
    const id = await createWebhook(f.app, f.user, first, ["inbox.created"], SECRET);
    // A long answer with characters outside ASCII: the log keeps the first 2,000 characters.
    const long = "é".repeat(1_500) + "x".repeat(1_500);
    f.receiver.respond({ status: 500, body: long });
    const eventId = await emitInboxCreated(f);
    const queue = f.app.deps.deliveries.queue;
    assert.equal(await queue.runOnce(), 1);
    const failedAt = f.clock.now();

    const [sent] = f.receiver.requests;
    const [retry, failed] = await deliveryLog(f, id);
    assert.equal(failed!.status, "failed");
    assert.equal(failed!.url, first);
    assert.equal(failed!.requestBody, sent!.body, "the body exactly as the receiver got it");
    assert.equal(
      sent!.headers["x-webhook-signature"],
      `sha256=${await hmacHex(SECRET, failed!.requestBody as string)}`,
      "the logged body is the one the signature covers",
    );
    assert.equal(failed!.responseBody, long.slice(0, 2_000));
    assert.equal(failed!.nextAttemptAt, null);

    // The retry, pending: when it runs (the schedule's +10 s with the fixture's jitter), nothing sent yet.
    const due = new Date(failedAt.getTime() + retryDelayMs(1, undefined, () => 0.5)!);
    assert.equal(retry!.status, "pending");
    assert.equal(retry!.attempt, 2);
    assert.equal(retry!.nextAttemptAt, due.toISOString());
    assert.equal(retry!.url, null, "not sent yet");
    assert.equal(retry!.responseBody, null);
    assert.equal(retry!.requestBody, sent!.body, "every attempt of the event sends the same body");

    // The webhook moves; the retry goes to the new URL, and the first attempt's record keeps the old one.
    const second = f.receiver.url("/v2");
    const moved = await f.app.request(`/api/user-webhooks/${id}`, {
      method: "PATCH",
      json: { url: second },
      cookie: f.user.cookie,
    });
    assert.equal(moved.status, 200);
    await moved.body?.cancel();
    f.receiver.respond({ status: 200, body: "thanks" });
    f.clock.advance(due.getTime() - f.clock.now().getTime());
    assert.equal(await queue.runOnce(), 1);
    const resent = f.receiver.requests[1]!;
    assert.equal(resent.path, "/v2");

    const log = await deliveryLog(f, id);
    assert.deepEqual(
      log.map((d) => [d.attempt, d.status, d.url, d.responseBody, d.nextAttemptAt]),
      [[2, "succeeded", second, "thanks", null], [1, "failed", first, long.slice(0, 2_000), null]],
    );
    assert.equal(log[0]!.requestBody, resent.body);
    assert.equal(resent.body, sent!.body);
    assert.equal(JSON.parse(log[0]!.requestBody as string).id, eventId);

    // A redelivery is pending at once, with the same body.
    const redo = await f.app.request(`/api/user-webhooks/${id}/deliveries/${log[1]!.id}/redeliver`, {
      method: "POST",
      cookie: f.user.cookie,
    });
    assert.equal(redo.status, 202);
    const queued = await redo.json();
    assert.equal(queued.nextAttemptAt, f.clock.now().toISOString());
    assert.equal(queued.requestBody, sent!.body);
    assert.equal(queued.url, null);

    // Never the secret, anywhere in the log.
    const text = await (await f.app.request(`/api/user-webhooks/${id}/deliveries`, { cookie: f.user.cookie })).text();
    assert.ok(!text.includes(SECRET), "the secret is not in the log");
  } finally {
    await f.close();
  }
});

Deno.test("an attempt without an answer logs its url and no response body; an empty answer is an empty body", async () => {
  const f = await deliveryFixture();
  try {
    const refused = `https://localhost:${freePort()}/hook`;
    const down = await createWebhook(f.app, f.user, refused);
    const up = await createWebhook(f.app, f.user, f.receiver.url("/empty"));
    f.receiver.respond({ status: 204 });
    await emitInboxCreated(f);
    await f.app.deps.deliveries.queue.runOnce();

    const [, failed] = await deliveryLog(f, down);
    assert.equal(failed!.error, "Connection refused");
    assert.equal(failed!.url, refused);
    assert.equal(failed!.responseBody, null);
    const [ok] = await deliveryLog(f, up);
    assert.equal(ok!.status, "succeeded");
    assert.equal(ok!.responseStatus, 204);
    assert.equal(ok!.responseBody, "");
    assert.equal(ok!.requestBody, failed!.requestBody, "one event, one body, whatever the webhook");
  } finally {
    await f.close();
  }
});
