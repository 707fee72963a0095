/**
 * Waits of one inbox share a read per wake-up, and that read covers what
 * arrived, not the inbox's history: many waits with filters that do not
 * match, woken by a few mails, cost a few reads of a few messages. The group
 * still answers each wait with its own earliest match (filters as on the
 * list), and waits that join while mail keeps arriving miss nothing.
 */
import assert from "node:assert/strict";
import { metricValue, newUser } from "../_helpers/app.ts";
import { body } from "../_helpers/expect.ts";
import { waitUntil } from "../_helpers/wait.ts";
import { createInbox, withInboxes } from "../inboxes/_support.ts";
import { sendMail, waitersGauge, waitRequest } from "./_support.ts";

const counters = async (baseUrl: string) => ({
  reads: await metricValue(baseUrl, "inbox_message_wait_reads_total"),
  messages: await metricValue(baseUrl, "inbox_message_wait_messages_read_total"),
});

Deno.test("50 waits woken by 3 mails cost a few group reads of the new mails, not 150 reads of the inbox's history", async () => {
  await withInboxes(async ({ app, smtp }) => {
    const user = await newUser(app, "free");
    const inbox = await createInbox(app, user);
    for (let i = 0; i < 20; i++) {
      await sendMail(smtp.port, { to: inbox.address, subject: `old ${i}`, text: "history ".repeat(500) });
    }
    const stop = new AbortController();
    const waits = Array.from(
      { length: 50 },
      (_, i) => waitRequest(app, user, inbox.id, { timeoutMs: "30000", contains: `needle-${i}` }, stop.signal),
    );
    await waitUntil(async () => await waitersGauge(app) === 50, 10_000, () => "the waits never all held");
    const before = await counters(app.baseUrl);
    for (let i = 0; i < 3; i++) {
      await sendMail(smtp.port, { to: inbox.address, subject: `new ${i}`, text: "nothing to see" });
    }
    await waitUntil(
      async () => (await counters(app.baseUrl)).messages - before.messages >= 3,
      5_000,
      () => "the group never read the new mails",
    );
    // Let any late wake-up land before counting.
    await new Promise((done) => setTimeout(done, 200));
    const after = await counters(app.baseUrl);
    assert.ok(after.reads - before.reads <= 6, `${after.reads - before.reads} group reads for 3 mails`);
    assert.ok(after.messages - before.messages <= 6, `${after.messages - before.messages} messages read`);
    assert.equal(await waitersGauge(app), 50, "all still waiting: nothing matched");

    // One mail that matches one wait's filter answers that wait, and only it.
    await sendMail(smtp.port, { to: inbox.address, subject: "found", text: "here is needle-7 at last" });
    const answered = await waits[7]!;
    assert.equal(answered.status, 200);
    assert.equal((await body(answered)).subject, "found");
    assert.equal(await waitersGauge(app), 49);
    stop.abort();
    await Promise.allSettled(waits);
  });
});

Deno.test("one group, different filters: each wait gets its own earliest match, as the list filters them", async () => {
  await withInboxes(async ({ app, smtp }) => {
    const user = await newUser(app, "free");
    const inbox = await createInbox(app, user);
    const waits = {
      from: waitRequest(app, user, inbox.id, { timeoutMs: "20000", from: "BILLING@" }),
      subject: waitRequest(app, user, inbox.id, { timeoutMs: "20000", subject: "reset" }),
      contains: waitRequest(app, user, inbox.id, { timeoutMs: "20000", contains: "ÜBER-CODE" }),
      any: waitRequest(app, user, inbox.id, { timeoutMs: "20000" }),
      both: waitRequest(app, user, inbox.id, { timeoutMs: "20000", from: "billing", subject: "receipt" }),
    };
    await waitUntil(async () => await waitersGauge(app) === 5, 10_000, () => "the waits never all held");
    await sendMail(smtp.port, { to: inbox.address, from: "news@example.com", subject: "Weekly", text: "news" });
    await sendMail(smtp.port, { to: inbox.address, from: "billing@example.com", subject: "Invoice", text: "due" });
    await sendMail(smtp.port, { to: inbox.address, subject: "Password RESET", text: "use über-code 123456" });
    await sendMail(smtp.port, { to: inbox.address, from: "billing@example.com", subject: "Receipt", text: "paid" });
    const subjects = Object.fromEntries(
      await Promise.all(Object.entries(waits).map(async ([k, p]) => [k, (await body(await p)).subject])),
    );
    assert.deepEqual(subjects, {
      from: "Invoice",
      subject: "Password RESET",
      contains: "Password RESET",
      any: "Weekly",
      both: "Receipt",
    });
  });
});

Deno.test("followers that keep joining while 30 mails arrive each see every mail of their filter once, in order", async () => {
  await withInboxes(async ({ app, smtp }) => {
    const user = await newUser(app, "free");
    const inbox = await createInbox(app, user);
    const follow = async (filter: Record<string, string>, count: number) => {
      const seen: string[] = [];
      let after: string | undefined;
      while (seen.length < count) {
        const res = await waitRequest(app, user, inbox.id, {
          timeoutMs: "10000",
          ...filter,
          ...(after ? { after } : {}),
        });
        assert.equal(res.status, 200, `a follower of ${JSON.stringify(filter)} timed out after ${seen.length}`);
        const message = await body(res);
        seen.push(message.subject as string);
        after = message.id as string;
      }
      return seen;
    };
    const followers = [
      follow({}, 30),
      follow({}, 30),
      follow({ subject: "odd" }, 15),
      follow({ subject: "even" }, 15),
      follow({ contains: "mail 2" }, 11),
    ];
    await waitUntil(async () => await waitersGauge(app) >= 5, 10_000, () => "the followers never waited");
    await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        sendMail(smtp.port, {
          to: inbox.address,
          subject: `${i % 2 ? "odd" : "even"} ${String(i).padStart(2, "0")}`,
          text: `mail ${i}`,
        })),
    );
    const [all1, all2, odd, even, twos] = (await Promise.all(followers)) as [
      string[],
      string[],
      string[],
      string[],
      string[],
    ];
    // The order the inbox stored them in (its seq), which every follower sees.
    assert.equal(new Set(all1).size, 30, "every mail once");
    assert.deepEqual(all2, all1);
    assert.deepEqual(odd, all1.filter((s) => s.startsWith("odd")));
    assert.deepEqual(even, all1.filter((s) => s.startsWith("even")));
    const withTwo = (s: string) => /^(02|2\d)$/.test(s.slice(-2));
    assert.deepEqual(twos, all1.filter(withTwo));
  });
});
