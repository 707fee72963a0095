/**
 * Live groups (events/fanout.ts) on the real database: the streams of one
 * account at the end of its log share one read per commit; a member whose
 * client falls behind leaves with its position; one that joins a little
 * behind the group gets what it missed from the group's ring at once, one
 * further behind is sent back to read on its own; and a slow client over
 * real HTTP still gets every event once, in order.
 */
import assert from "node:assert/strict";
import { newUser } from "../_helpers/app.ts";
import { commitInboxEvents } from "../_helpers/events.ts";
import { withService } from "../_helpers/harness.ts";
import { waitUntil } from "../_helpers/wait.ts";
import { type FrameEvent, lastSeq } from "../../src/events/repo.ts";

/** The whole log of an account: every type, every inbox. */
const all = (accountId: string) => ({ accountId, types: [], inboxIds: null });

/** A member's output: what it was offered, and how many it takes before its client "falls behind". */
function memberOut(keepsUpFor = Infinity) {
  const got: FrameEvent[] = [];
  return { got, offer: (e: FrameEvent) => (got.push(e), got.length < keepsUpFor), ping: () => {} };
}

Deno.test("members of one group each get every event once; one whose client falls behind leaves with its position", async () => {
  await withService({ listen: true }, async ({ app }) => {
    const user = await newUser(app, "free");
    const live = app.deps.streams.live;
    const start = await lastSeq(app.deps.sql, user.id);
    const fast = memberOut();
    const slow = memberOut(3);
    const stopFast = new AbortController();
    const fastEnd = live.follow(all(user.id), start, fast, stopFast.signal);
    const slowEnd = live.follow(all(user.id), start, slow, new AbortController().signal);
    assert.equal(live.size, 1, "one group for the account and filter");
    const committed = await commitInboxEvents(app.deps.sql, user.id, 10, 4);
    await waitUntil(() => fast.got.length === 10, 10_000, () => `${fast.got.length} of 10`);
    assert.deepEqual(fast.got.map((e) => e.id), committed.map((c) => c.id));
    const behind = await slowEnd;
    assert.equal(behind.how, "behind");
    assert.deepEqual(slow.got.map((e) => e.id), committed.slice(0, 3).map((c) => c.id));
    assert.equal(behind.cursor, slow.got[2]!.seq, "its position: the last frame it was handed");
    stopFast.abort();
    const end = await fastEnd;
    assert.equal(end.how, "aborted");
    assert.equal(end.cursor, fast.got[9]!.seq);
    await waitUntil(() => live.size === 0, 10_000, () => "the group did not stop with its last member");
  });
});

Deno.test("a stream joining a little behind the group gets the rows it missed from the ring; one too far behind reads on its own", async () => {
  await withService({ listen: true }, async ({ app }) => {
    const user = await newUser(app, "free");
    const live = app.deps.streams.live;
    const start = await lastSeq(app.deps.sql, user.id);
    const first = memberOut();
    const stop = new AbortController();
    const firstEnd = live.follow(all(user.id), start, first, stop.signal);
    const five = await commitInboxEvents(app.deps.sql, user.id, 5, 5);
    await waitUntil(() => first.got.length === 5, 10_000, () => `${first.got.length} of 5`);

    const late = memberOut();
    const lateEnd = live.follow(all(user.id), start, late, stop.signal);
    assert.deepEqual(late.got.map((e) => e.id), five.map((c) => c.id), "at once, from the ring");
    const ahead = memberOut();
    const aheadEnd = live.follow(all(user.id), first.got[4]!.seq, ahead, stop.signal);
    assert.equal(ahead.got.length, 0, "nothing it has already written");

    const more = await commitInboxEvents(app.deps.sql, user.id, 300, 100);
    await waitUntil(() => first.got.length === 305, 10_000, () => `${first.got.length} of 305`);
    assert.deepEqual(late.got.map((e) => e.id), [...five, ...more].map((c) => c.id));
    assert.deepEqual(ahead.got.map((e) => e.id), more.map((c) => c.id));
    const far = await live.follow(all(user.id), start, memberOut(), stop.signal);
    assert.equal(far.how, "gap", "305 rows back is beyond the ring of 256");
    assert.equal(far.cursor, start);
    stop.abort();
    for (const end of await Promise.all([firstEnd, lateEnd, aheadEnd])) assert.equal(end.how, "aborted");
  });
});

Deno.test("a client that stops reading during 5,000 events gets every one once, in order, when it reads on", async () => {
  await withService({ listen: true }, async ({ app }) => {
    const user = await newUser(app, "free");
    const res = await fetch(`${app.baseUrl}/api/events/stream`, { headers: { cookie: user.cookie } });
    assert.equal(res.status, 200);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    await waitUntil(() => app.deps.streams.live.size === 1, 10_000, () => "the stream did not go live");
    const committed = await commitInboxEvents(app.deps.sql, user.id, 5_000, 500);
    const ids: string[] = [];
    let buffered = "";
    while (ids.length < committed.length) {
      const { value, done } = await reader.read();
      if (done) break;
      buffered += value;
      let end;
      while ((end = buffered.indexOf("\n\n")) >= 0) {
        const id = /^id: (.+)$/m.exec(buffered.slice(0, end))?.[1];
        if (id) ids.push(id);
        buffered = buffered.slice(end + 2);
      }
    }
    await reader.cancel();
    assert.equal(ids.length, committed.length);
    assert.deepEqual(ids, committed.map((c) => c.id));
  });
});
