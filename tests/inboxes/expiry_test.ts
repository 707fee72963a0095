/**
 * Expiry: an inbox is gone for the API and for SMTP the moment it expires;
 * the sweep then removes it with its messages and emits `inbox.expired`
 * exactly once, even with several instances sweeping together.
 */
import assert from "node:assert/strict";
import { createWebhook, getJson, newUser } from "../_helpers/app.ts";
import { sweepExpiredInboxes } from "../../src/inboxes/expiry.ts";
import { createOutbox } from "../../src/deliveries/outbox.ts";
import { sendRaw } from "../smtp/_smtp_client.ts";
import { countEvents, createInbox, expectError, type Json, withInboxes } from "./_support.ts";

Deno.test("an expired inbox is 404 and refuses mail before any sweep; the sweep emits inbox.expired once", async () => {
  await withInboxes(async ({ app, smtp, receiver, clock }) => {
    const user = await newUser(app, "pro");
    await createWebhook(app, user, receiver.url("/expired"), ["inbox.expired"]);
    const inbox = await createInbox(app, user, { localPart: "brief", ttlSeconds: 60 });
    const keeper = await createInbox(app, user, { localPart: "keeper", ttlSeconds: 3600 });
    for (const to of [inbox.address, keeper.address]) {
      const sent = await sendRaw(smtp.port, { from: "s@example.com", to: [to] }, "Subject: before\r\n\r\nx");
      assert.equal(sent.data?.code, 250);
    }
    const messageId = ((await getJson(app, user, `/api/inboxes/${inbox.id}/messages`)).json.data as Json[])[0]!.id;

    // One millisecond before: still alive.
    clock.advance(59_999);
    assert.equal((await getJson(app, user, `/api/inboxes/${inbox.id}`)).status, 200);
    assert.equal(await sweepExpiredInboxes(app.deps, clock.now()), 0);

    // At expiresAt: gone everywhere, though the row is still there.
    clock.advance(1);
    for (const path of [`/api/inboxes/${inbox.id}`, `/api/inboxes/${inbox.id}/messages`]) {
      await expectError(await app.request(path, { cookie: user.cookie }), 404, "INBOX_NOT_FOUND");
    }
    await expectError(
      await app.request(`/api/inboxes/${inbox.id}/messages/${messageId}`, { cookie: user.cookie }),
      404,
      "INBOX_NOT_FOUND",
    );
    await expectError(
      await app.request(`/api/inboxes/${inbox.id}`, { method: "DELETE", cookie: user.cookie }),
      404,
      "INBOX_NOT_FOUND",
    );
    const list = await getJson(app, user, "/api/inboxes");
    assert.deepEqual((list.json.data as Json[]).map((i) => i.id), [keeper.id]);
    const refused = await sendRaw(smtp.port, { from: "s@example.com", to: [inbox.address] }, "Subject: late\r\n\r\nx");
    assert.equal(refused.rcpt[0]!.code, 550);
    assert.equal((await app.deps.sql`SELECT count(*)::int AS n FROM inboxes WHERE id = ${inbox.id}`)[0]!.n, 1);
    assert.equal(await countEvents(app, "inbox.expired"), 0, "no event before the sweep");

    // The sweep.
    assert.equal(await sweepExpiredInboxes(app.deps, clock.now()), 1);
    await app.deps.deliveries.queue.drain();
    const [req] = await receiver.waitFor(1);
    const event = JSON.parse(req!.body);
    assert.equal(event.type, "inbox.expired");
    assert.equal(req!.headers["x-webhook-event"], "inbox.expired");
    assert.deepEqual(event.data, { inboxId: inbox.id, address: inbox.address, expiredAt: inbox.expiresAt });

    const inboxes = await app.deps.sql`SELECT id FROM inboxes ORDER BY id`;
    assert.deepEqual(inboxes.map((r) => r.id), [keeper.id]);
    const messages = await app.deps.sql`SELECT inbox_id FROM messages`;
    assert.deepEqual(messages.map((r) => r.inboxId), [keeper.id], "the expired inbox's messages are gone");

    // Sweeping again finds nothing: the event was once.
    assert.equal(await sweepExpiredInboxes(app.deps, clock.now()), 0);
    await app.deps.deliveries.queue.drain();
    assert.equal(receiver.requests.length, 1);
    assert.equal(await countEvents(app, "inbox.expired"), 1);
  });
});

Deno.test("two instances sweeping at once expire 50 inboxes with exactly 50 events", async () => {
  await withInboxes(async ({ app, db, clock, receiver }) => {
    const user = await newUser(app, "pro");
    await createWebhook(app, user, receiver.url("/expired"), ["inbox.expired"]);
    for (let i = 0; i < 50; i++) await createInbox(app, user, { localPart: `sweep${i}`, ttlSeconds: 60 });
    clock.advance(60_000);

    const [poolA, poolB] = [await db.connect(3), await db.connect(3)];
    // Small batches make the two sweepers interleave over many claims.
    const counts = await Promise.all([
      sweepExpiredInboxes({ outbox: createOutbox({ sql: poolA, hub: app.deps.hub }) }, clock.now(), 7),
      sweepExpiredInboxes({ outbox: createOutbox({ sql: poolB, hub: app.deps.hub }) }, clock.now(), 7),
      sweepExpiredInboxes({ outbox: createOutbox({ sql: poolA, hub: app.deps.hub }) }, clock.now(), 7),
    ]);
    assert.equal(counts.reduce((a, b) => a + b, 0), 50, `per sweeper: ${counts}`);
    assert.equal(await countEvents(app, "inbox.expired"), 50);
    const ids = await app.deps.sql`SELECT DISTINCT payload::jsonb -> 'data' ->> 'inboxId' AS id FROM events`;
    assert.equal(ids.length, 50, "one event per inbox");
    assert.equal((await app.deps.sql`SELECT count(*)::int AS n FROM inboxes`)[0]!.n, 0);
  });
});

Deno.test("taking the address of an expired, unswept inbox expires it then, with its one event", async () => {
  await withInboxes(async ({ app, clock, receiver }) => {
    const user = await newUser(app, "pro");
    const other = await newUser(app, "pro");
    await createWebhook(app, user, receiver.url("/expired"), ["inbox.expired"]);
    const old = await createInbox(app, user, { localPart: "reuse", ttlSeconds: 60 });
    clock.advance(120_000);

    const fresh = await createInbox(app, other, { localPart: "reuse" });
    assert.equal(fresh.address, old.address);
    assert.equal(await countEvents(app, "inbox.expired"), 1);
    assert.equal(await sweepExpiredInboxes(app.deps, clock.now()), 0, "nothing left for the sweep");
    await app.deps.deliveries.queue.drain();
    const [req] = await receiver.waitFor(1);
    assert.deepEqual(JSON.parse(req!.body).data, { inboxId: old.id, address: old.address, expiredAt: old.expiresAt });
    assert.equal(receiver.requests.length, 1);
  });
});
