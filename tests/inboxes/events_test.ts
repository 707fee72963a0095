/** `inbox.created` reaches subscribed webhooks, signed, at a real HTTPS receiver; nobody else gets it. */
import assert from "node:assert/strict";
import { createWebhook, newUser } from "../_helpers/app.ts";
import { hmacHex } from "../_helpers/hmac.ts";
import { countEvents, createInbox, withInboxes } from "./_support.ts";

const SECRET = "inbox-created-secret-123";

Deno.test("inbox.created is delivered on creation to the webhooks subscribed to it, and only to them", async () => {
  await withInboxes(async ({ app, receiver, clock }) => {
    const user = await newUser(app, "pro");
    const stranger = await newUser(app, "pro");
    const subscribed = await createWebhook(app, user, receiver.url("/created"), ["inbox.created"], SECRET);
    await createWebhook(app, user, receiver.url("/other-events"), ["message.received", "inbox.expired"]);
    await createWebhook(app, stranger, receiver.url("/stranger"), ["inbox.created"]);

    // The queue runs on its own: the creation's wake-up is what sends it.
    const inbox = await createInbox(app, user, { localPart: "hello", ttlSeconds: 120 });
    const [req] = await receiver.waitFor(1);
    assert.equal(req!.path, "/created");
    assert.equal(req!.headers["x-webhook-event"], "inbox.created");
    assert.equal(req!.headers["x-webhook-id"], subscribed);
    assert.equal(req!.headers["x-webhook-signature"], `sha256=${await hmacHex(SECRET, req!.body)}`);
    const event = JSON.parse(req!.body);
    assert.equal(event.type, "inbox.created");
    assert.match(event.id, /^evt_/);
    assert.equal(event.createdAt, clock.now().toISOString());
    assert.deepEqual(event.data, { inboxId: inbox.id, address: inbox.address, expiresAt: inbox.expiresAt });

    // Nothing else is on its way: no attempt for the other webhooks exists at all.
    await app.deps.deliveries.queue.drain();
    assert.equal(receiver.requests.length, 1);
    assert.equal(await countEvents(app, "inbox.created"), 1);
    const attempts = await app.deps.sql`SELECT webhook_id FROM deliveries`;
    assert.deepEqual(attempts.map((a) => a.webhookId), [subscribed]);
  }, { startDeliveries: true });
});

Deno.test("a refused creation emits nothing", async () => {
  await withInboxes(async ({ app, receiver }) => {
    const user = await newUser(app, "pro");
    await createWebhook(app, user, receiver.url("/created"), ["inbox.created"]);
    await createInbox(app, user, { localPart: "once" });
    const dup = await app.request("/api/inboxes", { method: "POST", json: { localPart: "once" }, cookie: user.cookie });
    assert.equal(dup.status, 400);
    await dup.body?.cancel();
    assert.equal(await countEvents(app, "inbox.created"), 1);
  });
});
