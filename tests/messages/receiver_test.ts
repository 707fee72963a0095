/**
 * Storing arriving mail in batches (messages/receive.ts `createReceiver`):
 * the copies of one message for all its recipients commit in one statement
 * with their events and deliveries, messages that arrive while a batch is
 * written go together in the next one, and one message the database refuses
 * fails alone.
 */
import assert from "node:assert/strict";
import { createWebhook, newUser, type TestApp } from "../_helpers/app.ts";
import { sleep } from "../_helpers/wait.ts";
import type { Outbox } from "../../src/deliveries/outbox.ts";
import { MAX_WEBHOOKS } from "../../src/webhooks/service.ts";
import { createInbox, withInboxes } from "../inboxes/_support.ts";
import { sendRaw } from "../smtp/_smtp_client.ts";
import { type Arrival, createReceiver } from "../../src/messages/receive.ts";
import { prepareMessage } from "../../src/messages/prepare.ts";

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

/**
 * The app's dependencies with an outbox whose `statement` is counted, and
 * fails at its `failAt`-th call: a batch is one statement; going back to one
 * arrival at a time, or to an inbox recreated since the RCPT check, is one
 * more each.
 */
function countingStatements(deps: TestApp["deps"], failAt = 0) {
  let calls = 0;
  const outbox: Outbox = {
    ...deps.outbox,
    statement: (change) => {
      calls++;
      return calls === failAt ? Promise.reject(new Error("database down")) : deps.outbox.statement(change);
    },
  };
  return { deps: { ...deps, outbox }, calls: () => calls };
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
    assert.equal((await receiver.inboxOf(gone!.address)) !== undefined, false);
    assert.equal((await receiver.inboxOf(live!.address.toUpperCase())) !== undefined, true);
    assert.equal((await receiver.inboxOf(`x@elsewhere.example`)) !== undefined, false);
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
    assert.equal((await receiver.inboxOf(inbox.address)) !== undefined, true);
    await app.request(`/api/inboxes/${inbox.id}`, { method: "DELETE", cookie: user.cookie });
    assert.equal((await receiver.inboxOf(inbox.address)) !== undefined, true, "remembered as live");
    assert.deepEqual(await receiver.receive(arrival([inbox.address], "late")), [], "checked again when stored");
    assert.equal((await app.deps.sql`SELECT 1 FROM messages`).length, 0);
    clock.advance(1_001);
    assert.equal((await receiver.inboxOf(inbox.address)) !== undefined, false, "asked again after a second");
    // Never past the inbox's own expiry.
    const short = await createInbox(app, user, { ttlSeconds: 60 });
    assert.equal((await receiver.inboxOf(short.address)) !== undefined, true);
    clock.advance(60_000);
    assert.equal((await receiver.inboxOf(short.address)) !== undefined, false);
  });
});

Deno.test("a batch's messages, their events and their deliveries commit together in one statement", async () => {
  await withInboxes(async ({ app, receiver }) => {
    const user = await newUser(app, "pro");
    const hooks = [
      await createWebhook(app, user, receiver.url("/a"), ["message.received"]),
      await createWebhook(app, user, receiver.url("/b"), ["message.received", "inbox.created"]),
      await createWebhook(app, user, receiver.url("/c"), ["inbox.expired"]),
    ];
    const [a, b] = await Promise.all([createInbox(app, user), createInbox(app, user)]);
    const counted = countingStatements(app.deps);
    const smtp = createReceiver(counted.deps);
    assert.equal((await smtp.inboxOf(a!.address)) !== undefined, true);
    assert.equal((await smtp.inboxOf(b!.address)) !== undefined, true);
    const stored = await Promise.all([
      smtp.receive(arrival([a!.address], "first")),
      smtp.receive(arrival([a!.address, b!.address], "second")),
    ]);
    assert.deepEqual(stored.map((s) => s.length), [1, 2]);
    const messages = await app.deps.sql<{ id: string; tx: string }[]>`SELECT id, xmin::text AS tx FROM messages`;
    const events = await app.deps.sql<{ id: string; payload: string; tx: string }[]>`
      SELECT id, payload, xmin::text AS tx FROM events WHERE type = 'message.received' ORDER BY seq`;
    const deliveries = await app.deps.sql<{ id: string; eventId: string; webhookId: string; tx: string }[]>`
      SELECT d.id, d.event_id, d.webhook_id, d.xmin::text AS tx FROM deliveries d
      JOIN events e ON e.id = d.event_id WHERE e.type = 'message.received'`;
    assert.equal(messages.length, 3);
    assert.equal(events.length, 3);
    // One delivery per event and subscribed webhook, with distinct ids; none for the webhook of inbox.expired.
    assert.equal(deliveries.length, 6);
    assert.equal(new Set(deliveries.map((d) => d.id)).size, 6);
    assert.ok(deliveries.every((d) => d.id.startsWith("dlv_")));
    for (const e of events) {
      assert.deepEqual(
        deliveries.filter((d) => d.eventId === e.id).map((d) => d.webhookId).sort(),
        hooks.slice(0, 2).sort(),
      );
    }
    // The first arrival went alone; the second waited and went in the next batch, whole.
    const tx = (ids: string[]) => new Set(ids);
    const second = events.slice(1);
    assert.equal(
      tx([
        ...second.map((e) => e.tx),
        ...deliveries.filter((d) => second.some((e) => e.id === d.eventId)).map((d) => d.tx),
      ]).size,
      1,
    );
    // The envelope as every emitter writes it: the copy's inbox, address and message.
    const envelope = JSON.parse(events[0]!.payload);
    assert.deepEqual(Object.keys(envelope), ["id", "type", "createdAt", "data"]);
    assert.equal(envelope.data.inboxId, a!.id);
    assert.equal(envelope.data.to, a!.address);
    assert.equal(envelope.data.messageId, stored[0]![0]!.messageId);
    assert.equal(counted.calls(), 2, "one statement per batch, none written again arrival by arrival");
  });
});

Deno.test("an inbox deleted and created anew under the same address since the RCPT check gets the message", async () => {
  await withInboxes(async ({ app }) => {
    const user = await newUser(app, "free");
    const first = await createInbox(app, user, { localPart: "reborn" });
    const smtp = createReceiver(app.deps);
    assert.equal((await smtp.inboxOf(first.address)) !== undefined, true);
    await app.request(`/api/inboxes/${first.id}`, { method: "DELETE", cookie: user.cookie });
    const second = await createInbox(app, user, { localPart: "reborn" });
    assert.equal(second.address, first.address);
    assert.deepEqual((await smtp.receive(arrival([first.address], "hello"))).map((s) => s.inboxId), [second.id]);
    const events = await app.deps.sql<
      { payload: string }[]
    >`SELECT payload FROM events WHERE type = 'message.received'`;
    assert.deepEqual(events.map((e) => JSON.parse(e.payload).data.inboxId), [second.id]);
  });
});

Deno.test("more subscribers than an account may have webhooks: each gets its delivery, in the batch's one statement", async () => {
  await withInboxes(async ({ app, receiver }) => {
    const user = await newUser(app, "pro");
    const hook = await createWebhook(app, user, receiver.url("/0"), ["message.received"]);
    // Past MAX_WEBHOOKS only through the database: the API refuses the eleventh.
    await app.deps.sql`
      INSERT INTO webhooks (id, account_id, url, events, secret_ciphertext, active, created_at)
      SELECT w.id || '_' || n, w.account_id, w.url || n, w.events, w.secret_ciphertext, true, w.created_at
      FROM webhooks w, generate_series(1, ${MAX_WEBHOOKS}) n WHERE w.id = ${hook}`;
    const inbox = await createInbox(app, user);
    const counted = countingStatements(app.deps);
    const stored = await createReceiver(counted.deps).receive(arrival([inbox.address], "crowded"));
    assert.equal(stored.length, 1);
    assert.equal(counted.calls(), 1, "the delivery ids are made by the statement, as many as there are subscribers");
    const deliveries = await app.deps.sql<{ id: string }[]>`
      SELECT d.id FROM deliveries d JOIN events e ON e.id = d.event_id WHERE e.type = 'message.received'`;
    assert.equal(deliveries.length, MAX_WEBHOOKS + 1);
    assert.equal(new Set(deliveries.map((d) => d.id)).size, MAX_WEBHOOKS + 1);
  });
});

Deno.test("once a batch's statement has committed, a failure to store a copy for a recreated inbox refuses its arrival alone, storing nothing twice", async () => {
  await withInboxes(async ({ app }) => {
    const user = await newUser(app, "free");
    const kept = await createInbox(app, user, { localPart: "kept" });
    const first = await createInbox(app, user, { localPart: "again" });
    const other = await createInbox(app, user, { localPart: "other" });
    // The batch's statement commits; the second one, for the recreated inbox, fails.
    const counted = countingStatements(app.deps, 2);
    const smtp = createReceiver(counted.deps);
    for (const inbox of [kept, first, other]) assert.equal((await smtp.inboxOf(inbox.address)) !== undefined, true);
    await app.request(`/api/inboxes/${first.id}`, { method: "DELETE", cookie: user.cookie });
    await createInbox(app, user, { localPart: "again" });
    const [both, alone] = await Promise.allSettled([
      smtp.receive(arrival([kept.address, first.address], "both")),
      smtp.receive(arrival([other.address], "alone")),
    ]);
    // The arrival with the recreated inbox is refused (its sender tries again); the other one is stored.
    assert.equal(both.status, "rejected");
    assert.equal(alone.status, "fulfilled");
    const rows = await app.deps.sql<{ subject: string; inboxId: string }[]>`
      SELECT subject, inbox_id FROM messages ORDER BY subject`;
    assert.deepEqual(rows.map((r) => [r.subject, r.inboxId]), [["alone", other.id], ["both", kept.id]]);
    const events = await app.deps.sql`SELECT 1 FROM events WHERE type = 'message.received'`;
    assert.equal(events.length, 2);
  });
});

Deno.test("a batch waits for an inbox creation that holds its account, instead of deadlocking with it", async () => {
  await withInboxes(async ({ app }) => {
    const user = await newUser(app, "free");
    const inbox = await createInbox(app, user);
    const counted = countingStatements(app.deps);
    const smtp = createReceiver(counted.deps);
    assert.equal((await smtp.inboxOf(inbox.address)) !== undefined, true);
    let stored: Promise<unknown> | undefined;
    // As inbox creation does: the account row FOR UPDATE, then (at the end) its event under the account's event lock.
    await app.deps.outbox.transaction(async (tx, emit) => {
      await tx`SELECT 1 FROM accounts WHERE id = ${user.id} FOR UPDATE`;
      stored = smtp.receive(arrival([inbox.address], "meanwhile"));
      await sleep(200); // the batch's statement is running and waiting by now
      const now = new Date();
      await emit(user.id, "inbox.created", {
        inboxId: "inb_test",
        address: "test@inbox.localhost",
        expiresAt: now.toISOString(),
      }, now);
    });
    assert.equal((await stored as unknown[]).length, 1);
    assert.equal(counted.calls(), 1, "the statement was not aborted as a deadlock victim (and written again)");
  });
});
