/**
 * Sub-addressing over the real path (nodemailer over SMTP, the API over HTTP):
 * mail to `<localPart>+<tag>@` the mail domain lands in the inbox
 * `<localPart>`, keeps the whole address as its `to` (and in its event), and
 * the `to` filter of the list and the wait selects it: one inbox per CI run,
 * one address per test. A bad tag, a second `+`, or a role name with a tag
 * is refused at RCPT.
 */
import assert from "node:assert/strict";
// @ts-types="npm:@types/nodemailer@8.0.2"
import nodemailer from "npm:nodemailer@10.6.0";
import { newUser } from "../_helpers/app.ts";
import { body } from "../_helpers/expect.ts";
import { waitUntil } from "../_helpers/wait.ts";
import { createInbox, withInboxes } from "../inboxes/_support.ts";
import { sendRaw } from "../smtp/_smtp_client.ts";
import { sendMail, waitersGauge, waitRequest } from "./_support.ts";

Deno.test("mail to ci+<tag>@ lands in the inbox ci, keeps its address, and the to filter selects it on the list and the wait", async () => {
  await withInboxes(async ({ app, smtp }) => {
    const user = await newUser(app, "free");
    const inbox = await createInbox(app, user, { localPart: "ci" });
    assert.equal(inbox.address, "ci@inbox.localhost");
    // A test waits for its own address before its sign-up mail is sent.
    const pending = waitRequest(app, user, inbox.id, { timeoutMs: "10000", to: "ci+Signup-2@" });
    await waitUntil(async () => await waitersGauge(app) === 1, 5_000, () => "the wait never held");
    await sendMail(smtp.port, { to: "ci+signup-1@inbox.localhost", subject: "first", text: "Your code is 111111" });
    await sendMail(smtp.port, { to: "CI+Signup-2@Inbox.Localhost", subject: "second", text: "Your code is 222222" });
    await sendMail(smtp.port, { to: "ci@inbox.localhost", subject: "plain", text: "no tag" });
    const waited = await body(await pending);
    assert.equal(waited.subject, "second");
    assert.equal(waited.to, "ci+Signup-2@inbox.localhost", "the tag keeps its case; the rest is the inbox's");
    assert.deepEqual(waited.codes, ["222222"]);

    const list = async (query: string) =>
      ((await body(await app.request(`/api/inboxes/${inbox.id}/messages${query}`, { cookie: user.cookie })))
        .data as { subject: string; to: string }[]).map((m) => `${m.subject} ${m.to}`).sort();
    // Sorted: the test's clock stands still, so the three share one receivedAt.
    assert.deepEqual(await list(""), [
      "first ci+signup-1@inbox.localhost",
      "plain ci@inbox.localhost",
      "second ci+Signup-2@inbox.localhost",
    ]);
    assert.deepEqual(await list("?to=ci%2Bsignup-1%40"), ["first ci+signup-1@inbox.localhost"]);
    assert.deepEqual(await list("?to=%2B"), [
      "first ci+signup-1@inbox.localhost",
      "second ci+Signup-2@inbox.localhost",
    ]);
    const events = await app.deps.sql<{ payload: string }[]>`
      SELECT payload FROM events WHERE type = 'message.received' ORDER BY seq`;
    assert.deepEqual(events.map((e) => JSON.parse(e.payload).data.to), [
      "ci+signup-1@inbox.localhost",
      "ci+Signup-2@inbox.localhost",
      "ci@inbox.localhost",
    ]);
  });
});

Deno.test("one message to two tags of one inbox is stored once for each, with its own to", async () => {
  await withInboxes(async ({ app, smtp }) => {
    const user = await newUser(app, "free");
    const inbox = await createInbox(app, user, { localPart: "run" });
    const transport = nodemailer.createTransport({
      host: "127.0.0.1",
      port: smtp.port,
      secure: false,
      ignoreTLS: true,
    });
    try {
      const info = await transport.sendMail({
        from: "app@example.com",
        to: ["run+a@inbox.localhost", "run+b@inbox.localhost", "RUN+a@inbox.localhost"],
        subject: "both",
        text: "hello",
      });
      assert.equal(info.accepted.length, 3);
    } finally {
      transport.close();
    }
    const page = await body(await app.request(`/api/inboxes/${inbox.id}/messages`, { cookie: user.cookie }));
    assert.deepEqual((page.data as { to: string }[]).map((m) => m.to).sort(), [
      "run+a@inbox.localhost",
      "run+b@inbox.localhost",
    ]);
  });
});

Deno.test("a bad tag, a second +, an unknown inbox or a role name with a tag is refused at RCPT with 550", async () => {
  await withInboxes(async ({ app, smtp }) => {
    const user = await newUser(app, "free");
    await createInbox(app, user, { localPart: "ci" });
    for (
      const to of [
        "ci+a+b@inbox.localhost",
        "ci+@inbox.localhost",
        `ci+${"t".repeat(65)}@inbox.localhost`,
        "ci+bad!tag@inbox.localhost",
        "nobody+tag@inbox.localhost",
        "postmaster+tag@inbox.localhost",
      ]
    ) {
      const sent = await sendRaw(smtp.port, { from: "s@example.com", to: [to] }, "Subject: x\r\n\r\nx\r\n");
      assert.equal(sent.rcpt[0]!.code, 550, `${to}: ${JSON.stringify(sent.rcpt[0])}`);
    }
    const ok = await sendRaw(
      smtp.port,
      { from: "s@example.com", to: ["ci+fine.tag_1-2@inbox.localhost"] },
      "Subject: x\r\n\r\nx\r\n",
    );
    assert.equal(ok.rcpt[0]!.code, 250);
    assert.equal(ok.data?.code, 250);
  });
});
