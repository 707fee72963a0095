/**
 * GET /api/inboxes/{id}/messages/wait over the real path: mail sent over SMTP
 * into the listener, the long poll over real HTTP. It answers with the
 * earliest matching message after the cursor, whether it came before the
 * call or during it, 204 when nothing came in time, 404 for an inbox that is
 * unknown or goes away, 400 for a bad query; it holds no database connection
 * while it waits, frees its waiter when the client leaves, and is woken by a
 * message stored on another instance (NOTIFY) or on its own (the harness's
 * instances do not LISTEN unless asked: the local fan-out, as on the embedded
 * database).
 */
import assert from "node:assert/strict";
import { newUser } from "../_helpers/app.ts";
import { body, expectError } from "../_helpers/expect.ts";
import { startHarness } from "../_helpers/harness.ts";
import { waitUntil } from "../_helpers/wait.ts";
import { createInbox, withInboxes } from "../inboxes/_support.ts";
import { sendMail, waitersGauge, waitRequest } from "./_support.ts";

Deno.test("a message that arrives during the wait answers it, with its code", async () => {
  await withInboxes(async ({ app, smtp }) => {
    const user = await newUser(app, "free");
    const inbox = await createInbox(app, user);
    const pending = waitRequest(app, user, inbox.id, { timeoutMs: "20000" });
    await waitUntil(async () => await waitersGauge(app) === 1, 5_000, () => "the request never started waiting");
    const started = performance.now();
    await sendMail(smtp.port, { to: inbox.address, subject: "Your code", text: "Your verification code is 482913." });
    const res = await pending;
    const waited = performance.now() - started;
    assert.equal(res.status, 200);
    const message = await body(res);
    assert.equal(message.subject, "Your code");
    assert.deepEqual(message.codes, ["482913"]);
    assert.equal(message.inboxId, inbox.id);
    // Woken by the message, not by the end of the hold (20 s).
    assert.ok(waited < 10_000, `answered ${Math.round(waited)} ms after the mail`);
    assert.equal(await waitersGauge(app), 0);
  });
});

Deno.test("messages already there answer at once, earliest first; after= follows the inbox in order; 204 past the end", async () => {
  await withInboxes(async ({ app, smtp }) => {
    const user = await newUser(app, "free");
    const inbox = await createInbox(app, user);
    // Sent back to back: same clock instant (the test clock stands still), stored in this order.
    for (const n of [1, 2, 3]) await sendMail(smtp.port, { to: inbox.address, subject: `m${n}`, text: `body ${n}` });
    const seen: string[] = [];
    let after: string | undefined;
    for (let i = 0; i < 3; i++) {
      const res = await waitRequest(app, user, inbox.id, { timeoutMs: "0", ...(after ? { after } : {}) });
      assert.equal(res.status, 200);
      const m = await body(res);
      seen.push(m.subject as string);
      after = m.id as string;
    }
    assert.deepEqual(seen, ["m1", "m2", "m3"]);
    const none = await waitRequest(app, user, inbox.id, { timeoutMs: "0", after: after! });
    assert.equal(none.status, 204);
    assert.equal(await none.text(), "");
    const short = await waitRequest(app, user, inbox.id, { timeoutMs: "150", after: after! });
    assert.equal(short.status, 204);
  });
});

Deno.test("filters: from, subject and contains match case-insensitively, combined with AND, on the wait and the list", async () => {
  await withInboxes(async ({ app, smtp, clock }) => {
    const user = await newUser(app, "free");
    const inbox = await createInbox(app, user);
    await sendMail(smtp.port, {
      to: inbox.address,
      from: "Shop <orders@shop.example>",
      subject: "Order shipped",
      text: "Tracking inside",
    });
    clock.advance(1_000);
    const since = clock.now().toISOString();
    await sendMail(smtp.port, {
      to: inbox.address,
      from: "Acme Accounts <no-reply@acme.example>",
      subject: "Confirm your e-mail",
      html: "<p>Click <b>CONFIRM</b> below</p>",
    });
    const first = async (query: Record<string, string>) => {
      const res = await waitRequest(app, user, inbox.id, { timeoutMs: "0", ...query });
      return res.status === 200 ? (await body(res)).subject : res.status;
    };
    assert.equal(await first({ from: "ACME" }), "Confirm your e-mail", "display name");
    assert.equal(await first({ from: "orders@shop" }), "Order shipped", "address");
    assert.equal(await first({ subject: "confirm" }), "Confirm your e-mail");
    assert.equal(await first({ contains: "confirm" }), "Confirm your e-mail", "HTML body");
    assert.equal(await first({ contains: "tracking" }), "Order shipped", "text body");
    assert.equal(await first({ from: "acme", subject: "order" }), 204, "AND");
    assert.equal(await first({ since }), "Confirm your e-mail", "since is inclusive");
    assert.equal(await first({ subject: "%" }), 204, "no wildcards");

    const list = async (query: string) =>
      ((await body(await app.request(`/api/inboxes/${inbox.id}/messages?${query}`, { cookie: user.cookie })))
        .data as { subject: string }[]).map((m) => m.subject);
    assert.deepEqual(await list(""), ["Confirm your e-mail", "Order shipped"], "newest first");
    assert.deepEqual(await list("from=shop"), ["Order shipped"]);
    assert.deepEqual(await list(`since=${encodeURIComponent(since)}`), ["Confirm your e-mail"]);
    assert.deepEqual(await list("contains=nothing-like-this"), []);
  });
});

Deno.test("400 VALIDATION_ERROR for a bad timeoutMs, since or after; 404 INBOX_NOT_FOUND for an unknown or foreign inbox", async () => {
  await withInboxes(async ({ app, smtp }) => {
    const user = await newUser(app, "free");
    const inbox = await createInbox(app, user);
    for (const timeoutMs of ["-1", "1.5", "55001", "abc", "", "1e3", " 5"]) {
      await expectError(await waitRequest(app, user, inbox.id, { timeoutMs }), 400, "VALIDATION_ERROR");
    }
    await expectError(await waitRequest(app, user, inbox.id, { since: "yesterday" }), 400, "VALIDATION_ERROR");
    await expectError(await waitRequest(app, user, inbox.id, { after: "msg_unknown" }), 400, "VALIDATION_ERROR");
    // A message of another inbox is not a cursor of this one.
    const other = await createInbox(app, user);
    await sendMail(smtp.port, { to: other.address, subject: "elsewhere", text: "x" });
    const elsewhere = await body(await waitRequest(app, user, other.id, { timeoutMs: "0" }));
    await expectError(
      await waitRequest(app, user, inbox.id, { after: elsewhere.id as string }),
      400,
      "VALIDATION_ERROR",
    );
    await expectError(await waitRequest(app, user, "inb_unknown"), 404, "INBOX_NOT_FOUND", "Inbox not found");
    const stranger = await newUser(app, "free");
    await expectError(await waitRequest(app, stranger, inbox.id), 404, "INBOX_NOT_FOUND");
    await expectError(
      await app.request(`/api/inboxes/${inbox.id}/messages?since=nope`, { cookie: user.cookie }),
      400,
      "VALIDATION_ERROR",
    );
  });
});

Deno.test("an inbox deleted during the wait answers 404 at once; one that expires during it, 404", async () => {
  await withInboxes(async ({ app, clock }) => {
    const user = await newUser(app, "free");
    const inbox = await createInbox(app, user);
    const pending = waitRequest(app, user, inbox.id, { timeoutMs: "30000" });
    await waitUntil(async () => await waitersGauge(app) === 1, 5_000, () => "not waiting");
    const started = performance.now();
    const del = await app.request(`/api/inboxes/${inbox.id}`, { method: "DELETE", cookie: user.cookie });
    assert.equal(del.status, 200);
    await expectError(await pending, 404, "INBOX_NOT_FOUND");
    assert.ok(performance.now() - started < 15_000, "woken by the deletion, not by the end of the hold");

    const short = await createInbox(app, user, { ttlSeconds: 60 });
    const expiring = waitRequest(app, user, short.id, { timeoutMs: "1000" });
    await waitUntil(async () => await waitersGauge(app) === 1, 5_000, () => "not waiting");
    clock.advance(61_000);
    await expectError(await expiring, 404, "INBOX_NOT_FOUND");
  });
});

Deno.test("a client that goes away frees its waiter at once (inbox_message_waiters)", async () => {
  await withInboxes(async ({ app }) => {
    const user = await newUser(app, "free");
    const inbox = await createInbox(app, user);
    const controllers = Array.from({ length: 5 }, () => new AbortController());
    const pending = controllers.map((c) =>
      waitRequest(app, user, inbox.id, { timeoutMs: "50000" }, c.signal).catch(() => "aborted")
    );
    await waitUntil(async () => await waitersGauge(app) === 5, 5_000, async () => `${await waitersGauge(app)} waiting`);
    for (const c of controllers) c.abort();
    assert.deepEqual(await Promise.all(pending), Array(5).fill("aborted"));
    await waitUntil(async () => await waitersGauge(app) === 0, 5_000, async () => `${await waitersGauge(app)} left`);
  });
});

Deno.test("waiting requests hold no database connection: 40 waits beside a pool of 5, other requests still answer", async () => {
  await withInboxes(async ({ app, smtp }) => {
    const user = await newUser(app, "free");
    const inbox = await createInbox(app, user);
    let done = 0;
    const waits = Array.from(
      { length: 40 },
      () =>
        waitRequest(app, user, inbox.id, { timeoutMs: "20000" }).then(async (r) => {
          done++;
          return (await body(r)).subject;
        }),
    );
    await waitUntil(
      async () => await waitersGauge(app) === 40,
      10_000,
      async () => `${await waitersGauge(app)} waiting`,
    );
    // Each of these needs a pooled connection; with 40 held, none would get one.
    for (let i = 0; i < 5; i++) {
      const res = await app.request("/api/inboxes", { cookie: user.cookie });
      assert.equal(res.status, 200);
      await res.body?.cancel();
    }
    assert.equal(done, 0, "the waits are still waiting");
    await sendMail(smtp.port, { to: inbox.address, subject: "for all", text: "x" });
    assert.deepEqual(await Promise.all(waits), Array(40).fill("for all"), "one message wakes every waiter");
  });
});

Deno.test("a message stored by one instance wakes a wait on another instance at once (NOTIFY through the hub)", async () => {
  const h = await startHarness({ smtp: true, listen: true });
  try {
    const other = await h.startInstance({ listen: true });
    const user = await newUser(h.app, "free");
    const inbox = await createInbox(h.app, user);
    // The wait is on the other instance; the mail goes to the first one's SMTP listener.
    const pending = waitRequest(other, user, inbox.id, { timeoutMs: "20000" });
    await waitUntil(async () => await waitersGauge(other) === 1, 5_000, () => "not waiting");
    const started = performance.now();
    await sendMail(h.smtp.port, { to: inbox.address, subject: "cross", text: "code 7731" });
    const res = await pending;
    assert.equal(res.status, 200);
    assert.equal((await body(res)).subject, "cross");
    assert.ok(performance.now() - started < 10_000, "woken by the other instance's NOTIFY, not by the timeout");
  } finally {
    await h.close();
  }
});

Deno.test("a follower with after= misses nothing while 30 messages arrive at once over 30 connections", async () => {
  await withInboxes(async ({ app, smtp }) => {
    const user = await newUser(app, "free");
    const inbox = await createInbox(app, user);
    const seen: string[] = [];
    let sending = true;
    const follower = (async () => {
      let after: string | undefined;
      while (true) {
        const res = await waitRequest(app, user, inbox.id, { timeoutMs: "1000", ...(after ? { after } : {}) });
        if (res.status === 204) {
          if (!sending) return;
          continue;
        }
        const m = await body(res);
        seen.push(m.subject as string);
        after = m.id as string;
      }
    })();
    await Promise.all(
      Array.from({ length: 30 }, (_, i) => sendMail(smtp.port, { to: inbox.address, subject: `n${i}`, text: "x" })),
    );
    sending = false;
    await follower;
    assert.equal(seen.length, 30, `got ${seen.length}: ${seen.join(" ")}`);
    assert.equal(new Set(seen).size, 30, "each once");
  });
});
