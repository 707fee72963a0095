/**
 * The Server-Sent Events frames the database makes for a stream (events/repo.ts):
 * `event`, one `data` line per line of the envelope, `id`, a blank line; the
 * same bytes for a replay's one buffer and a live group's row, UTF-8 as stored.
 */
import assert from "node:assert/strict";
import { newUser } from "../_helpers/app.ts";
import { withService } from "../_helpers/harness.ts";
import { readEvents, readFrames } from "../../src/events/repo.ts";

const text = (data: Uint8Array) => new TextDecoder().decode(data);

Deno.test("frames: event, data and id lines and a blank line; line breaks split into data lines; UTF-8 as stored", async () => {
  await withService({}, async ({ app }) => {
    const user = await newUser(app, "free");
    const payloads = ['{"id":"evt_a","type":"inbox.created"}', "a\nb\r\nc\rd", '{"s":"ünï ✓"}'];
    for (const [i, payload] of payloads.entries()) {
      await app.deps.sql`
        INSERT INTO events (id, account_id, type, payload, created_at, seq)
        VALUES (${`evt_f${i}`}, ${user.id}, 'inbox.created', ${payload}, now(), nextval('events_seq'))`;
    }
    const expected = [
      'event: inbox.created\ndata: {"id":"evt_a","type":"inbox.created"}\nid: evt_f0\n\n',
      "event: inbox.created\ndata: a\ndata: b\ndata: c\ndata: d\nid: evt_f1\n\n",
      'event: inbox.created\ndata: {"s":"ünï ✓"}\nid: evt_f2\n\n',
    ];
    const live = await readEvents(app.deps.sql, { accountId: user.id, types: [], inboxIds: null }, "0", 500, 1_000_000);
    assert.deepEqual(live.rows.map((r) => text(r.frame)), expected);
    assert.deepEqual(live.rows.map((r) => r.id), ["evt_f0", "evt_f1", "evt_f2"]);
    const replay = await readFrames(
      app.deps.sql,
      { accountId: user.id, types: [], inboxIds: null },
      "0",
      500,
      1_000_000,
    );
    assert.equal(text(replay.frames), expected.join(""), "a replay's buffer is the rows' frames, in order");
    assert.equal(replay.lastSeq, live.rows.at(-1)!.seq);
    assert.equal(replay.more, false);
    const none = await readFrames(
      app.deps.sql,
      { accountId: user.id, types: [], inboxIds: null },
      replay.lastSeq!,
      500,
      1_000_000,
    );
    assert.deepEqual([none.frames.byteLength, none.lastSeq, none.more], [0, undefined, false]);
    const bounded = await readFrames(
      app.deps.sql,
      { accountId: user.id, types: [], inboxIds: null },
      "0",
      2,
      1_000_000,
    );
    assert.equal(text(bounded.frames), expected.slice(0, 2).join(""));
    assert.equal(bounded.more, true, "stopped at its row bound");
  });
});
