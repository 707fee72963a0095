/**
 * SMTP ingestion end to end: a real SMTP client sends to the listener, the
 * message shows up in the API, and a signed `message.received` reaches a
 * real HTTPS receiver. Also the refusals (550, 552) and malformed mail.
 */
import assert from "node:assert/strict";
import { createOutbox } from "../../src/deliveries/outbox.ts";
// @ts-types="npm:@types/nodemailer@8.0.2"
import nodemailer from "npm:nodemailer@10.6.0";
import { createWebhook, getJson, newApiKey, newUser } from "../_helpers/app.ts";
import { hmacHex } from "../_helpers/hmac.ts";
import { body, createInbox, type Json, MAIL_DOMAIN, withInboxes } from "../inboxes/_support.ts";
import { sendRaw, SmtpConversation } from "./_smtp_client.ts";
import { startSmtpServer } from "../../src/smtp/server.ts";
import { testSmtpTls } from "../_helpers/smtp_tls.ts";
import type { Sql } from "../../src/db/client.ts";

const SECRET = "a-webhook-secret-of-some-length";

function transport(port: number) {
  return nodemailer.createTransport({ host: "127.0.0.1", port, secure: false, ignoreTLS: true });
}

function simpleMail(to: string, subject: string, text = "Hello."): string {
  return [
    "From: Sender <sender@example.com>",
    `To: ${to}`,
    `Subject: ${subject}`,
    "Message-ID: <m1@example.com>",
    "",
    text,
    "",
  ].join("\r\n");
}

Deno.test("a real email is stored, readable through the API, and delivered signed as message.received", async () => {
  await withInboxes(async ({ app, smtp, receiver, clock }) => {
    const user = await newUser(app, "pro");
    const { key } = await newApiKey(app, user);
    const webhookId = await createWebhook(app, user, receiver.url("/hook"), ["message.received"], SECRET);
    const inbox = await createInbox(app, user, { localPart: "alice" });
    assert.equal(inbox.address, `alice@${MAIL_DOMAIN}`);

    const mailer = transport(smtp.port);
    try {
      const info = await mailer.sendMail({
        from: '"Sender Person" <sender@example.com>',
        // Recipients match case-insensitively.
        to: `ALICE@${MAIL_DOMAIN}`,
        subject: "Hello ✓ from the test",
        text: "Plain body.\nSecond line.",
        html: "<p>HTML <b>body</b></p>",
        headers: { "X-Trace": ["first", "second"], "X-Single": "one" },
        attachments: [{ filename: "note.txt", content: "attachment content", contentType: "text/plain" }],
      });
      assert.deepEqual(info.accepted, [`ALICE@${MAIL_DOMAIN}`]);
      assert.deepEqual(info.rejected, []);
    } finally {
      mailer.close();
    }

    // The summary, with the API key as the credential.
    const listRes = await app.request(`/api/inboxes/${inbox.id}/messages`, { auth: key });
    const list = await body(listRes);
    assert.equal(listRes.status, 200, JSON.stringify(list));
    const data = list.data as Json[];
    assert.equal(data.length, 1);
    assert.equal(list.nextCursor, null);
    const summary = data[0]!;
    assert.deepEqual(Object.keys(summary).sort(), ["from", "id", "inboxId", "receivedAt", "size", "subject", "to"]);
    assert.match(summary.id as string, /^msg_/);
    assert.equal(summary.inboxId, inbox.id);
    assert.equal(summary.to, inbox.address);
    assert.equal(summary.from, '"Sender Person" <sender@example.com>');
    assert.equal(summary.subject, "Hello ✓ from the test");
    assert.equal(summary.receivedAt, clock.now().toISOString());
    assert.ok((summary.size as number) > 500, `size ${summary.size}`);

    // The detail.
    const detail = await getJson(app, user, `/api/inboxes/${inbox.id}/messages/${summary.id}`);
    assert.equal(detail.status, 200, JSON.stringify(detail.json));
    const m = detail.json;
    assert.deepEqual(
      Object.keys(m).sort(),
      [
        "attachments",
        "codes",
        "from",
        "headers",
        "html",
        "id",
        "inboxId",
        "links",
        "receivedAt",
        "size",
        "subject",
        "text",
        "to",
      ],
    );
    assert.equal(m.text, "Plain body.\nSecond line.");
    assert.equal(m.html, "<p>HTML <b>body</b></p>");
    const [attachment] = m.attachments as Json[];
    assert.match(attachment!.id as string, /^att_/);
    assert.deepEqual(m.attachments, [{
      id: attachment!.id,
      filename: "note.txt",
      contentType: "text/plain",
      size: 18,
    }]);
    assert.deepEqual(m.codes, []);
    assert.deepEqual(m.links, []);
    const [types] = await app.deps.sql`SELECT jsonb_typeof(headers) AS h, jsonb_typeof(attachments) AS a FROM messages`;
    assert.deepEqual({ ...types }, { h: "object", a: "array" }, "stored as JSON values, not JSON strings");
    const headers = m.headers as Record<string, string>;
    assert.equal(headers["subject"], "Hello ✓ from the test", "encoded words are decoded");
    assert.equal(headers["x-trace"], "first, second", "a repeated header is joined");
    assert.equal(headers["x-single"], "one");
    assert.match(headers["content-type"] ?? "", /^multipart\/mixed/);
    assert.ok(Object.keys(headers).every((k) => k === k.toLowerCase()), "header names are lowercase");
    for (const k of ["id", "inboxId", "from", "to", "subject", "receivedAt", "size"]) {
      assert.deepEqual(m[k], summary[k], k);
    }

    // The signed delivery.
    await app.deps.deliveries.queue.drain();
    const [req] = await receiver.waitFor(1);
    assert.equal(req!.method, "POST");
    assert.equal(req!.path, "/hook");
    assert.equal(req!.headers["x-webhook-event"], "message.received");
    assert.equal(req!.headers["x-webhook-id"], webhookId);
    assert.equal(req!.headers["x-webhook-signature"], `sha256=${await hmacHex(SECRET, req!.body)}`);
    const event = JSON.parse(req!.body);
    assert.deepEqual(Object.keys(event).sort(), ["createdAt", "data", "id", "type"]);
    assert.match(event.id, /^evt_/);
    assert.equal(event.type, "message.received");
    assert.equal(event.createdAt, clock.now().toISOString());
    assert.deepEqual(event.data, {
      inboxId: inbox.id,
      messageId: summary.id,
      from: summary.from,
      to: inbox.address,
      subject: summary.subject,
      receivedAt: summary.receivedAt,
      size: summary.size,
      codes: [],
      links: [],
    });
    assert.equal(receiver.requests.length, 1);
  });
});

Deno.test("one message to several inboxes is stored once per inbox, each with its own event", async () => {
  await withInboxes(async ({ app, smtp, receiver }) => {
    const alice = await newUser(app, "pro");
    const bob = await newUser(app, "pro");
    await createWebhook(app, alice, receiver.url("/alice"), ["message.received"]);
    await createWebhook(app, bob, receiver.url("/bob"), ["message.received"]);
    const a = await createInbox(app, alice, { localPart: "a1" });
    const b = await createInbox(app, bob, { localPart: "b1" });

    const sent = await sendRaw(
      smtp.port,
      { from: "s@example.com", to: [a.address, b.address, a.address] },
      [
        "Subject: Both",
        "",
        "hi",
      ].join("\r\n"),
    );
    assert.deepEqual(sent.rcpt.map((r) => r.code), [250, 250, 250]);
    assert.equal(sent.data?.code, 250, JSON.stringify(sent.data));

    for (const [user, inbox] of [[alice, a], [bob, b]] as const) {
      const list = await getJson(app, user, `/api/inboxes/${inbox.id}/messages`);
      const data = list.json.data as Json[];
      assert.equal(data.length, 1, "a repeated recipient is stored once");
      assert.equal(data[0]!.to, inbox.address);
      assert.equal(data[0]!.from, "s@example.com", "no From header: the envelope sender");
      assert.equal(data[0]!.subject, "Both");
    }
    await app.deps.deliveries.queue.drain();
    const reqs = await receiver.waitFor(2);
    assert.deepEqual(reqs.map((r) => r.path).sort(), ["/alice", "/bob"]);
    const byPath = Object.fromEntries(reqs.map((r) => [r.path, JSON.parse(r.body)]));
    assert.equal(byPath["/alice"].data.inboxId, a.id);
    assert.equal(byPath["/bob"].data.inboxId, b.id);
    assert.notEqual(byPath["/alice"].data.messageId, byPath["/bob"].data.messageId);
  });
});

Deno.test("unknown recipients, other domains and expired inboxes get 550 at RCPT", async () => {
  await withInboxes(async ({ app, smtp, clock }) => {
    const user = await newUser(app, "free");
    const live = await createInbox(app, user, { localPart: "live", ttlSeconds: 3600 });
    await createInbox(app, user, { localPart: "short", ttlSeconds: 60 });
    clock.advance(60_000);

    const smtpConv = await SmtpConversation.open(smtp.port);
    try {
      assert.equal((await smtpConv.command("EHLO client.test")).code, 250);
      assert.equal((await smtpConv.command("MAIL FROM:<s@example.com>")).code, 250);
      const unknown = await smtpConv.command(`RCPT TO:<nobody@${MAIL_DOMAIN}>`);
      assert.equal(unknown.code, 550);
      assert.equal(unknown.text, "5.1.1 No such mailbox");
      assert.equal((await smtpConv.command("RCPT TO:<live@example.com>")).code, 550, "wrong domain");
      assert.equal((await smtpConv.command(`RCPT TO:<live@sub.${MAIL_DOMAIN}>`)).code, 550, "subdomain");
      assert.equal((await smtpConv.command(`RCPT TO:<short@${MAIL_DOMAIN}>`)).code, 550, "expired, not swept");
      assert.equal((await smtpConv.command("RCPT TO:<live>")).code >= 500, true, "no domain");
      assert.equal((await smtpConv.command(`RCPT TO:<LiVe@${MAIL_DOMAIN.toUpperCase()}>`)).code, 250);
      assert.equal((await smtpConv.data(simpleMail(live.address, "Still here"))).code, 250);
    } finally {
      await smtpConv.quit();
    }
    const rows = await app.deps.sql`SELECT to_address FROM messages`;
    assert.deepEqual(rows.map((r) => r.toAddress), [live.address]);
  });
});

Deno.test("a message over SMTP_MAX_BYTES is refused with 552 and nothing is stored", async () => {
  await withInboxes(async ({ app, smtp }) => {
    const user = await newUser(app, "free");
    const inbox = await createInbox(app, user, { localPart: "small" });
    const big = "x".repeat(10 * 1024);

    // A client that reads the announced SIZE declares it at MAIL FROM and is refused there.
    const ehlo = await SmtpConversation.open(smtp.port);
    try {
      assert.match((await ehlo.command("EHLO client.test")).text, /SIZE 2048/);
    } finally {
      await ehlo.quit();
    }
    const mailer = transport(smtp.port);
    try {
      await assert.rejects(
        mailer.sendMail({ from: "s@example.com", to: inbox.address, subject: "big", text: big }),
        (err: { responseCode?: number }) => err.responseCode === 552,
      );
    } finally {
      mailer.close();
    }

    // One that declares nothing is refused at the end of DATA.
    const sent = await sendRaw(
      smtp.port,
      { from: "s@example.com", to: [inbox.address] },
      simpleMail(inbox.address, "big", big),
    );
    assert.equal(sent.data?.code, 552, JSON.stringify(sent.data));

    // The listener is still fine, and a small message still fits.
    const small = await sendRaw(
      smtp.port,
      { from: "s@example.com", to: [inbox.address] },
      simpleMail(inbox.address, "ok"),
    );
    assert.equal(small.data?.code, 250);
    const rows = await app.deps.sql`SELECT subject FROM messages`;
    assert.deepEqual(rows.map((r) => r.subject), ["ok"]);
  }, { env: { SMTP_MAX_BYTES: "2048" } });
});

Deno.test("malformed MIME is accepted and stored as best parsed; the listener takes the next message", async () => {
  await withInboxes(async ({ app, smtp }) => {
    const user = await newUser(app, "free");
    const inbox = await createInbox(app, user, { localPart: "weird" });
    const malformed = [
      "From: <<<not an address",
      "Subject: =?UTF-8?B?broken-base64?=",
      'Content-Type: multipart/mixed; boundary="never-closed"',
      "Content-Transfer-Encoding: base64",
      "Header line without colon",
      "",
      "--never-closed",
      "Content-Type: text/plain; charset=no-such-charset",
      "Content-Transfer-Encoding: quoted-printable",
      "",
      "bad =ZZ escape and a NUL \u0000 byte",
      "--never-closed",
      "Content-Type: application/octet-stream; name=",
      "Content-Disposition: attachment",
      "Content-Transfer-Encoding: base64",
      "",
      "!!!not base64!!!",
    ].join("\r\n");
    const sent = await sendRaw(smtp.port, { from: "s@example.com", to: [inbox.address] }, malformed);
    assert.equal(sent.data?.code, 250, JSON.stringify(sent.data));
    const next = await sendRaw(
      smtp.port,
      { from: "s@example.com", to: [inbox.address] },
      simpleMail(inbox.address, "Next"),
    );
    assert.equal(next.data?.code, 250, JSON.stringify(next.data));

    const list = await getJson(app, user, `/api/inboxes/${inbox.id}/messages`);
    const data = list.json.data as Json[];
    assert.equal(data.length, 2);
    const subjects = data.map((d) => d.subject);
    assert.ok(subjects.includes("Next"));
    const weird = data.find((d) => d.subject !== "Next")!;
    const weirdDetail = await getJson(app, user, `/api/inboxes/${inbox.id}/messages/${weird.id}`);
    assert.match(weirdDetail.json.text as string, /bad =ZZ escape and a NUL +byte/);
    assert.equal((weirdDetail.json.headers as Json)["content-transfer-encoding"], "base64");
    assert.ok(!("" in (weirdDetail.json.headers as Json)), "a line without a name is no header");
    for (const d of data) {
      const detail = await getJson(app, user, `/api/inboxes/${inbox.id}/messages/${d.id}`);
      assert.equal(detail.status, 200, JSON.stringify(detail.json));
      assert.ok(!JSON.stringify(detail.json).includes("\\u0000"), "no NUL reaches storage");
    }
  });
});

Deno.test("internal failures answer 451 (retry later) and never take the listener down", async () => {
  await withInboxes(async ({ app, smtp }) => {
    const user = await newUser(app, "free");
    const inbox = await createInbox(app, user, { localPart: "flaky" });
    const down = () => Promise.reject(new Error("database down"));
    // Storing fails (the batch's statement, then the transactions it is written again in), while the RCPT
    // lookup works: every statement but the lookup rejects when it is run. Pieces of SQL nested in a statement
    // are built as usual (postgres.js reads them, it does not run them).
    const isLookup = (strings: unknown) =>
      Array.isArray(strings) && strings.join("").includes("FROM inboxes") && strings.join("").includes("address = ANY");
    const storeFails = new Proxy(app.deps.sql, {
      get: (target, prop, receiver) => prop === "begin" ? down : Reflect.get(target, prop, receiver),
      apply: (target, self, args) => {
        const query = Reflect.apply(target as unknown as (...a: unknown[]) => unknown, self, args);
        if (!Array.isArray(args[0]) || isLookup(args[0])) return query;
        return Object.assign(query as object, {
          then: (ok: () => void, fail: (e: unknown) => void) => down().then(ok, fail),
        });
      },
    }) as Sql;
    // Every query fails.
    const allFail = new Proxy(app.deps.sql, { apply: down }) as Sql;
    const over = (sql: Sql) => ({ ...app.deps, sql, outbox: createOutbox({ sql, hub: app.deps.hub }) });
    const tls = { tls: await testSmtpTls() };
    const listeners = [await startSmtpServer(over(storeFails), tls), await startSmtpServer(over(allFail), tls)];
    try {
      const afterData = await sendRaw(
        listeners[0]!.port,
        { from: "s@example.com", to: [inbox.address] },
        simpleMail(inbox.address, "a"),
      );
      assert.equal(afterData.rcpt[0]!.code, 250);
      assert.equal(afterData.data?.code, 451, JSON.stringify(afterData.data));
      const atRcpt = await sendRaw(
        listeners[1]!.port,
        { from: "s@example.com", to: [inbox.address] },
        simpleMail(inbox.address, "b"),
      );
      assert.equal(atRcpt.rcpt[0]!.code, 451, JSON.stringify(atRcpt.rcpt));
      // The same listeners answer the next conversation.
      const again = await sendRaw(
        listeners[0]!.port,
        { from: "s@example.com", to: [inbox.address] },
        simpleMail(inbox.address, "c"),
      );
      assert.equal(again.data?.code, 451);
    } finally {
      for (const l of listeners) await l.close();
    }
    const ok = await sendRaw(smtp.port, { from: "s@example.com", to: [inbox.address] }, simpleMail(inbox.address, "d"));
    assert.equal(ok.data?.code, 250);
    const rows = await app.deps.sql`SELECT subject FROM messages`;
    assert.deepEqual(rows.map((r) => r.subject), ["d"]);
  });
});
