/**
 * Storing arriving mail in batches (messages/receive.ts `createReceiver`):
 * the copies of one message for all its recipients commit in one
 * transaction, messages that arrive while a batch is written go together in
 * the next one, and one message the database refuses fails alone.
 */
import assert from "node:assert/strict";
import { newUser } from "../_helpers/app.ts";
import { createInbox, withInboxes } from "../inboxes/_support.ts";
import { sendRaw } from "../smtp/_smtp_client.ts";
import { type Arrival, createReceiver, prepareMessage } from "../../src/messages/receive.ts";

function arrival(to: string[], subject: string, text = "body"): Arrival {
  return {
    addresses: to,
    message: prepareMessage({
      from: "sender@example.com",
      subject,
      text,
      html: null,
      headers: { subject },
      attachments: [{ filename: "a.txt", contentType: "text/plain", content: new TextEncoder().encode(subject) }],
      raw: new TextEncoder().encode(`Subject: ${subject}\r\n\r\n${text}\r\n`),
    }),
  };
}

Deno.test("one message to three inboxes over SMTP: its copies and their events commit in one transaction", async () => {
  await withInboxes(async ({ app, smtp }) => {
    const user = await newUser(app, "free");
    const inboxes = await Promise.all([1, 2, 3].map(() => createInbox(app, user)));
    const raw = `From: a@example.com\r\nSubject: to three\r\n\r\nHello\r\n`;
    const sent = await sendRaw(smtp.port, { from: "a@example.com", to: inboxes.map((i) => i.address) }, raw);
    assert.equal(sent.data?.code, 250);
    const rows = await app.deps.sql<{ inboxId: string; tx: string }[]>`
      SELECT inbox_id, xmin::text AS tx FROM messages ORDER BY inbox_id`;
    assert.deepEqual(rows.map((r) => r.inboxId), inboxes.map((i) => i.id).sort());
    const events = await app.deps.sql<{ tx: string }[]>`
      SELECT xmin::text AS tx FROM events WHERE type = 'message.received'`;
    assert.equal(events.length, 3);
    assert.equal(new Set([...rows, ...events].map((r) => r.tx)).size, 1, "one transaction");
  });
});

Deno.test("arrivals submitted while batches are being written go together in the next one, in order", async () => {
  await withInboxes(async ({ app }) => {
    const user = await newUser(app, "free");
    const [a, b] = await Promise.all([createInbox(app, user), createInbox(app, user)]);
    const receiver = createReceiver(app.deps);
    // One batch at a time: the first arrival goes alone, the next four wait and go together.
    const stored = await Promise.all([
      receiver.receive(arrival([a!.address], "m1")),
      receiver.receive(arrival([b!.address], "m2")),
      receiver.receive(arrival([a!.address], "m3")),
      receiver.receive(arrival([b!.address, a!.address.toUpperCase()], "m4")),
      receiver.receive(arrival([a!.address], "m5")),
    ]);
    assert.deepEqual(stored.map((s) => s.length), [1, 1, 1, 2, 1]);
    const rows = await app.deps.sql<{ subject: string; inboxId: string; tx: string }[]>`
      SELECT subject, inbox_id, xmin::text AS tx FROM messages ORDER BY seq`;
    const tx = (subject: string) => new Set(rows.filter((r) => r.subject === subject).map((r) => r.tx));
    assert.equal(new Set(rows.filter((r) => ["m2", "m3", "m4", "m5"].includes(r.subject)).map((r) => r.tx)).size, 1);
    assert.notDeepEqual(tx("m1"), tx("m2"));
    // Within the batch, an inbox's messages take their places in the order they arrived.
    assert.deepEqual(rows.filter((r) => r.inboxId === a!.id).map((r) => r.subject).slice(-3), ["m3", "m4", "m5"]);
    const attachments = await app.deps.sql`SELECT 1 FROM attachments`;
    assert.equal(attachments.length, 6);
  });
});

Deno.test("a message the database refuses fails alone: the rest of its batch is stored", async () => {
  await withInboxes(async ({ app }) => {
    const user = await newUser(app, "free");
    const inbox = await createInbox(app, user);
    const receiver = createReceiver(app.deps);
    // PostgreSQL text cannot hold U+0000 (the parser removes it from real mail; this arrival skips the parser).
    const results = await Promise.allSettled([
      receiver.receive(arrival([inbox.address], "m1")),
      receiver.receive(arrival([inbox.address], "m2")),
      receiver.receive(arrival([inbox.address], "m3", "bad\u0000body")),
      receiver.receive(arrival([inbox.address], "m4")),
    ]);
    assert.deepEqual(results.map((r) => r.status), ["fulfilled", "fulfilled", "rejected", "fulfilled"]);
    const rows = await app.deps.sql<{ subject: string }[]>`SELECT subject FROM messages ORDER BY subject`;
    assert.deepEqual(rows.map((r) => r.subject), ["m1", "m2", "m4"]);
    const events = await app.deps.sql`SELECT 1 FROM events WHERE type = 'message.received'`;
    assert.equal(events.length, 3);
  });
});

Deno.test("a copy for an inbox that is gone by the time its batch is written is not stored, nor its event", async () => {
  await withInboxes(async ({ app }) => {
    const user = await newUser(app, "free");
    const [live, gone] = await Promise.all([createInbox(app, user), createInbox(app, user)]);
    await app.request(`/api/inboxes/${gone!.id}`, { method: "DELETE", cookie: user.cookie });
    const receiver = createReceiver(app.deps);
    assert.equal(await receiver.accepts(gone!.address), false);
    assert.equal(await receiver.accepts(live!.address.toUpperCase()), true);
    assert.equal(await receiver.accepts(`x@elsewhere.example`), false);
    const stored = await receiver.receive(arrival([live!.address, gone!.address], "both"));
    assert.deepEqual(stored.map((s) => s.inboxId), [live!.id]);
    const events = await app.deps.sql`SELECT 1 FROM events WHERE type = 'message.received'`;
    assert.equal(events.length, 1);
  });
});

Deno.test("an address found live passes RCPT again without a query for a second; mail for an inbox deleted meanwhile is not stored", async () => {
  await withInboxes(async ({ app, clock }) => {
    const user = await newUser(app, "free");
    const inbox = await createInbox(app, user);
    const receiver = createReceiver(app.deps);
    assert.equal(await receiver.accepts(inbox.address), true);
    await app.request(`/api/inboxes/${inbox.id}`, { method: "DELETE", cookie: user.cookie });
    assert.equal(await receiver.accepts(inbox.address), true, "remembered as live");
    assert.deepEqual(await receiver.receive(arrival([inbox.address], "late")), [], "checked again when stored");
    assert.equal((await app.deps.sql`SELECT 1 FROM messages`).length, 0);
    clock.advance(1_001);
    assert.equal(await receiver.accepts(inbox.address), false, "asked again after a second");
    // Never past the inbox's own expiry.
    const short = await createInbox(app, user, { ttlSeconds: 60 });
    assert.equal(await receiver.accepts(short.address), true);
    clock.advance(60_000);
    assert.equal(await receiver.accepts(short.address), false);
  });
});
