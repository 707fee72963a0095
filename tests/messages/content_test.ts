/**
 * What a received message carries, over real SMTP and HTTP: the raw message
 * exactly as sent in DATA, attachments with ids and downloadable contents
 * under safe headers, codes and links in the message and in the signed
 * `message.received` delivery, and deletion.
 */
import assert from "node:assert/strict";
import { createWebhook, newUser } from "../_helpers/app.ts";
import { body, expectError } from "../_helpers/expect.ts";
import { createInbox, withInboxes } from "../inboxes/_support.ts";
import { sendRaw } from "../smtp/_smtp_client.ts";
import { sendMail, waitRequest } from "./_support.ts";
import { contentDisposition } from "../../src/messages/routes.ts";

Deno.test("GET .../raw answers the bytes received in DATA (dot-unstuffed), as message/rfc822, nothing added", async () => {
  await withInboxes(async ({ app, smtp }) => {
    const user = await newUser(app, "free");
    const inbox = await createInbox(app, user);
    const raw = [
      "From: Sender <sender@example.com>",
      `To: ${inbox.address}`,
      "Subject: =?UTF-8?B?w5xiZXJwcsO8ZnVuZw==?=",
      "Message-ID: <raw-1@example.com>",
      "Content-Type: text/plain; charset=utf-8",
      "",
      "A line that starts with a dot:",
      ".hidden", // sent dot-stuffed ("..hidden") by the client, stored as ".hidden"
      "Code: 551 204",
      "",
    ].join("\r\n");
    const sent = await sendRaw(smtp.port, { from: "sender@example.com", to: [inbox.address] }, raw);
    assert.equal(sent.data?.code, 250);
    const message = await body(await waitRequest(app, user, inbox.id, { timeoutMs: "0" }));
    assert.equal(message.subject, "Überprüfung");
    assert.deepEqual(message.codes, ["551204"]);

    const res = await app.request(`/api/inboxes/${inbox.id}/messages/${message.id}/raw`, { cookie: user.cookie });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "message/rfc822");
    const bytes = new Uint8Array(await res.arrayBuffer());
    assert.equal(new TextDecoder().decode(bytes), raw, "exactly the DATA bytes, without the terminating dot");
    assert.equal(message.size, bytes.byteLength);
    await expectError(
      await app.request(`/api/inboxes/${inbox.id}/messages/msg_unknown/raw`, { cookie: user.cookie }),
      404,
      "MESSAGE_NOT_FOUND",
    );
  });
});

Deno.test("attachments get ids; their contents download with their type, an RFC 6266 filename and safe headers", async () => {
  await withInboxes(async ({ app, smtp }) => {
    const user = await newUser(app, "free");
    const inbox = await createInbox(app, user);
    const pdf = new Uint8Array([0x25, 0x50, 0x44, 0x46, 0x2d, 0x31, 0x2e, 0x34, 0x0a, 0x00, 0xff, 0x10]);
    await sendMail(smtp.port, {
      to: inbox.address,
      subject: "Your invoice",
      text: "Attached.",
      attachments: [
        { filename: "invoice.pdf", content: pdf, contentType: "application/pdf" },
        { filename: 'résumé "v2".txt', content: "plain text", contentType: "text/plain" },
        { filename: "page.html", content: "<script>alert(1)</script>", contentType: "text/html" },
      ],
    });
    const message = await body(await waitRequest(app, user, inbox.id, { timeoutMs: "0" }));
    const attachments = message.attachments as { id: string; filename: string; contentType: string; size: number }[];
    assert.equal(attachments.length, 3);
    assert.ok(attachments.every((a) => a.id.startsWith("att_")));
    assert.deepEqual(attachments.map((a) => [a.filename, a.contentType, a.size]), [
      ["invoice.pdf", "application/pdf", pdf.byteLength],
      ['résumé "v2".txt', "text/plain", 10],
      ["page.html", "text/html", 25],
    ]);

    const get = (id: string) =>
      app.request(`/api/inboxes/${inbox.id}/messages/${message.id}/attachments/${id}`, { cookie: user.cookie });
    const first = await get(attachments[0]!.id);
    assert.equal(first.status, 200);
    assert.equal(first.headers.get("content-type"), "application/pdf");
    assert.equal(first.headers.get("content-disposition"), 'attachment; filename="invoice.pdf"');
    assert.equal(first.headers.get("x-content-type-options"), "nosniff");
    assert.deepEqual(new Uint8Array(await first.arrayBuffer()), pdf);

    const second = await get(attachments[1]!.id);
    assert.equal(
      second.headers.get("content-disposition"),
      `attachment; filename="r_sum_ _v2_.txt"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%22v2%22.txt`,
    );
    assert.equal(await second.text(), "plain text");

    const html = await get(attachments[2]!.id);
    assert.equal(html.headers.get("content-security-policy"), "sandbox");
    assert.match(html.headers.get("content-disposition")!, /^attachment;/);
    await html.body?.cancel();

    await expectError(await get("att_unknown"), 404, "ATTACHMENT_NOT_FOUND", "Attachment not found");
    await expectError(
      await app.request(`/api/inboxes/${inbox.id}/messages/msg_unknown/attachments/${attachments[0]!.id}`, {
        cookie: user.cookie,
      }),
      404,
      "MESSAGE_NOT_FOUND",
    );
    const stranger = await newUser(app, "free");
    await expectError(
      await app.request(`/api/inboxes/${inbox.id}/messages/${message.id}/attachments/${attachments[0]!.id}`, {
        cookie: stranger.cookie,
      }),
      404,
      "INBOX_NOT_FOUND",
    );
  });
});

Deno.test("contentDisposition: ASCII names quoted, others with filename*, separators and quotes replaced", () => {
  assert.equal(contentDisposition(null), "attachment");
  assert.equal(contentDisposition("a.txt"), 'attachment; filename="a.txt"');
  assert.equal(
    contentDisposition("../etc/passwd"),
    `attachment; filename=".._etc_passwd"; filename*=UTF-8''..%2Fetc%2Fpasswd`,
  );
  assert.equal(
    contentDisposition("日本.pdf"),
    `attachment; filename="__.pdf"; filename*=UTF-8''%E6%97%A5%E6%9C%AC.pdf`,
  );
  assert.equal(contentDisposition("a\r\nb"), `attachment; filename="a__b"; filename*=UTF-8''a%0D%0Ab`);
});

Deno.test("DELETE a message: 200, then it is gone (message, raw, attachments); 404 MESSAGE_NOT_FOUND again", async () => {
  await withInboxes(async ({ app, smtp }) => {
    const user = await newUser(app, "free");
    const inbox = await createInbox(app, user);
    await sendMail(smtp.port, {
      to: inbox.address,
      subject: "to delete",
      text: "x",
      attachments: [{ filename: "a.txt", content: "a" }],
    });
    await sendMail(smtp.port, { to: inbox.address, subject: "to keep", text: "y" });
    const first = await body(await waitRequest(app, user, inbox.id, { timeoutMs: "0" }));
    const path = `/api/inboxes/${inbox.id}/messages/${first.id}`;
    const stranger = await newUser(app, "free");
    await expectError(await app.request(path, { method: "DELETE", cookie: stranger.cookie }), 404, "INBOX_NOT_FOUND");
    const del = await app.request(path, { method: "DELETE", cookie: user.cookie });
    assert.equal(del.status, 200);
    assert.deepEqual(await body(del), { success: true });
    await expectError(await app.request(path, { cookie: user.cookie }), 404, "MESSAGE_NOT_FOUND", "Message not found");
    await expectError(await app.request(`${path}/raw`, { cookie: user.cookie }), 404, "MESSAGE_NOT_FOUND");
    await expectError(await app.request(path, { method: "DELETE", cookie: user.cookie }), 404, "MESSAGE_NOT_FOUND");
    const [row] = await app.deps.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM attachments`;
    assert.equal(row!.n, 0, "its attachments went with it");
    const left = await body(await waitRequest(app, user, inbox.id, { timeoutMs: "0" }));
    assert.equal(left.subject, "to keep");
  });
});

Deno.test("message.received carries the codes and the first 20 link URLs; the message has every link with its text", async () => {
  await withInboxes(async ({ app, smtp, receiver }) => {
    const user = await newUser(app, "pro");
    await createWebhook(app, user, receiver.url("/hook"), ["message.received"]);
    const inbox = await createInbox(app, user);
    const anchors = Array.from(
      { length: 22 },
      (_, i) => `<a href="https://example.com/l/${i}?a=1&amp;b=2">Link ${i}</a>`,
    );
    await sendMail(smtp.port, {
      to: inbox.address,
      subject: "Sign in to Example",
      html: `<p>Your sign-in code is <b>730 215</b>.</p>${anchors.join(" ")}`,
    });
    const message = await body(await waitRequest(app, user, inbox.id, { timeoutMs: "0" }));
    assert.deepEqual(message.codes, ["730215"]);
    const links = message.links as { url: string; text: string | null }[];
    assert.equal(links.length, 22);
    assert.deepEqual(links[0], { url: "https://example.com/l/0?a=1&b=2", text: "Link 0" });

    await app.deps.deliveries.queue.drain();
    const [delivery] = await receiver.waitFor(1);
    const event = JSON.parse(delivery!.body);
    assert.equal(event.type, "message.received");
    assert.deepEqual(event.data.codes, ["730215"]);
    assert.deepEqual(event.data.links, links.slice(0, 20).map((l) => l.url));
  });
});
