/**
 * A stream whose client stops reading holds a bounded amount and is let go:
 * a replay of large events reads them a few at a time (bounded in bytes, not
 * only rows), and a client that leaves its events unread for two keep-alive
 * intervals is cut; it resumes with Last-Event-ID and gets every event
 * exactly once, in order.
 */
import assert from "node:assert/strict";
import { newUser } from "../_helpers/app.ts";
import { withService } from "../_helpers/harness.ts";
import type { Sql } from "../../src/db/client.ts";
import { readEvents } from "../../src/events/repo.ts";

/** Stores `count` inbox.created events of about `bytes` each for the account, directly, in log order. */
async function storeLargeEvents(sql: Sql, accountId: string, count: number, bytes: number): Promise<string[]> {
  const ids = Array.from({ length: count }, (_, i) => `evt_large_${i}_${crypto.randomUUID().slice(0, 8)}`);
  const filler = "x".repeat(bytes);
  for (const id of ids) {
    const payload = JSON.stringify({
      id,
      type: "inbox.created",
      createdAt: new Date().toISOString(),
      data: { inboxId: "inb_large", address: "large@inbox.localhost", expiresAt: new Date().toISOString(), filler },
    });
    await sql`
      INSERT INTO events (id, account_id, type, payload, created_at, seq)
      VALUES (${id}, ${accountId}, 'inbox.created', ${payload}, now(), nextval('events_seq'))`;
  }
  return ids;
}

/** Reads the SSE body until it ends (or `ms` pass); the ids of the frames, in order. */
async function readIds(body: ReadableStream<Uint8Array>, ms: number): Promise<{ ids: string[]; ended: boolean }> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  const timer = setTimeout(() => reader.cancel(), ms);
  let text = "";
  let ended = false;
  try {
    while (true) {
      const { value, done } = await reader.read();
      if (done) {
        ended = true;
        break;
      }
      text += value;
    }
  } catch {
    // Cancelled by the timer.
  } finally {
    clearTimeout(timer);
  }
  // A frame counts only when complete (its blank line arrived).
  const ids = [...text.matchAll(/\nid: (\S+)\n\n/g)].map((m) => m[1]!);
  return { ids, ended };
}

Deno.test("a stream's replay reads large events a few at a time: bounded in bytes, not only rows", async () => {
  await withService({}, async ({ app }) => {
    const user = await newUser(app, "free");
    await storeLargeEvents(app.deps.sql, user.id, 20, 100_000);
    const batch = await readEvents(
      app.deps.sql,
      { accountId: user.id, types: [], inboxIds: null },
      "0",
      500,
      32 * 1024,
    );
    assert.equal(batch.rows.length, 1, "one event past the byte bound is all a read takes");
    assert.equal(batch.more, true);
    const small = await readEvents(
      app.deps.sql,
      { accountId: user.id, types: [], inboxIds: null },
      "0",
      500,
      10_000_000,
    );
    assert.equal(small.rows.length, 20);
    assert.equal(small.more, false);
  });
});

Deno.test("a client that stops reading is cut after two keep-alive intervals; it resumes with Last-Event-ID and misses nothing", async () => {
  await withService({ env: { EVENT_STREAM_KEEP_ALIVE_MS: "300" } }, async ({ app }) => {
    const user = await newUser(app, "free");
    // 12 MB: more than the kernel's socket buffers take, so the server's writes wait for the client.
    const ids = await storeLargeEvents(app.deps.sql, user.id, 40, 300_000);
    const first = await fetch(`${app.baseUrl}/api/events/stream?after=${ids[0]}`, { headers: { cookie: user.cookie } });
    assert.equal(first.status, 200);
    // The client reads nothing for a while: longer than the 600 ms the server gives it.
    await new Promise((done) => setTimeout(done, 2_000));
    const got = await readIds(first.body!, 20_000);
    assert.ok(got.ended, "the server ended the stream");
    assert.ok(got.ids.length < ids.length - 1, `cut before the end (${got.ids.length} of ${ids.length - 1})`);
    // The stream gave back its place.
    const open = await app.deps.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM open_requests WHERE account_id = ${user.id}`;
    assert.equal(open[0]!.n, 0);

    const resumed = await fetch(`${app.baseUrl}/api/events/stream`, {
      headers: { cookie: user.cookie, "last-event-id": got.ids.at(-1) ?? ids[0]! },
    });
    const rest: string[] = [];
    const reader = resumed.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (got.ids.length + rest.length < ids.length - 1) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
      rest.splice(0, rest.length, ...[...text.matchAll(/\nid: (\S+)\n\n/g)].map((m) => m[1]!));
    }
    await reader.cancel();
    assert.deepEqual([...got.ids, ...rest], ids.slice(1), "every event after the cursor exactly once, in order");
  });
});
