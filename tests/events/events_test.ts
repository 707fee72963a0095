/**
 * The event log and the live stream over the real path: events from the API
 * (inbox.created), from SMTP (message.received) and from the expiry sweep
 * (inbox.expired) are all stored, subscribed or not, and read back in commit
 * order from GET /api/events and GET /api/events/stream; a stream cut
 * mid-burst and resumed with Last-Event-ID gets every event exactly once; a
 * stream on one instance sees what another committed.
 */
import assert from "node:assert/strict";
import { metricValue, newUser, type User } from "../_helpers/app.ts";
import { body, expectError } from "../_helpers/expect.ts";
import { startHarness } from "../_helpers/harness.ts";
import { openSse } from "../_helpers/sse.ts";
import { waitUntil } from "../_helpers/wait.ts";
import { createInbox, withInboxes } from "../inboxes/_support.ts";
import { sendMail } from "../messages/_support.ts";
import { sweepExpiredInboxes } from "../../src/inboxes/expiry.ts";
import type { Api } from "../_helpers/app.ts";

type Envelope = { id: string; type: string; createdAt: string; data: Record<string, unknown> };

async function listEvents(app: Api, user: User, query = ""): Promise<{ data: Envelope[]; nextCursor: string | null }> {
  const res = await app.request(`/api/events${query}`, { cookie: user.cookie });
  assert.equal(res.status, 200);
  return await body(res) as unknown as { data: Envelope[]; nextCursor: string | null };
}

function streamOf(app: Api, user: User, query = "", headers: Record<string, string> = {}) {
  return openSse(`${app.baseUrl}/api/events/stream${query}`, { cookie: user.cookie, ...headers });
}

Deno.test("events from the API, SMTP and the expiry sweep are all kept, in commit order, on the list and the stream", async () => {
  await withInboxes(async ({ app, smtp, clock }) => {
    const user = await newUser(app, "free"); // no webhooks at all: every event is kept anyway
    const stream = await streamOf(app, user);
    const short = await createInbox(app, user, { ttlSeconds: 60 });
    const long = await createInbox(app, user, { ttlSeconds: 3600 });
    await sendMail(smtp.port, { to: long.address, subject: "Your code", text: "Your code is 552 901." });
    clock.advance(61_000);
    await sweepExpiredInboxes(app.deps, clock.now());

    const page = await listEvents(app, user);
    assert.deepEqual(page.data.map((e) => e.type), [
      "inbox.created",
      "inbox.created",
      "message.received",
      "inbox.expired",
    ]);
    assert.deepEqual(page.data.map((e) => e.data.inboxId), [short.id, long.id, long.id, short.id]);
    for (const e of page.data) assert.deepEqual(Object.keys(e).sort(), ["createdAt", "data", "id", "type"]);
    assert.deepEqual(page.data[2]!.data.codes, ["552901"]);
    assert.equal(page.nextCursor, page.data[3]!.id);

    await stream.waitForFrames(4);
    const frames = stream.frames();
    assert.deepEqual(frames.map((f) => f.id), page.data.map((e) => e.id), "the stream follows the same order");
    assert.deepEqual(frames.map((f) => f.event), page.data.map((e) => e.type));
    assert.deepEqual(frames.map((f) => JSON.parse(f.data)), page.data, "data is the envelope");
    stream.close();

    // Paging on with after=, and the type filter.
    const after = await listEvents(app, user, `?after=${page.data[1]!.id}&limit=1`);
    assert.deepEqual(after.data.map((e) => e.type), ["message.received"]);
    const expired = await listEvents(app, user, "?types=inbox.expired,message.received");
    assert.deepEqual(expired.data.map((e) => e.type), ["message.received", "inbox.expired"]);
    assert.deepEqual((await listEvents(app, user, `?after=${page.nextCursor}`)).data, []);
  });
});

Deno.test("400 VALIDATION_ERROR for an unknown type or another account's event; streams of another account see nothing", async () => {
  await withInboxes(async ({ app }) => {
    const user = await newUser(app, "free");
    const other = await newUser(app, "free");
    await createInbox(app, other);
    const [theirs] = (await listEvents(app, other)).data;
    await expectError(
      await app.request("/api/events?types=inbox.deleted", { cookie: user.cookie }),
      400,
      "VALIDATION_ERROR",
    );
    await expectError(
      await app.request(`/api/events?after=${theirs!.id}`, { cookie: user.cookie }),
      400,
      "VALIDATION_ERROR",
    );
    await expectError(await app.request("/api/events?limit=0", { cookie: user.cookie }), 400, "VALIDATION_ERROR");
    await expectError(
      await app.request("/api/events/stream", { cookie: user.cookie, headers: { "last-event-id": theirs!.id } }),
      400,
      "VALIDATION_ERROR",
    );
    await expectError(await app.request("/api/events"), 401, "UNAUTHORIZED");
    assert.deepEqual((await listEvents(app, user)).data, [], "not another account's events");
  });
});

Deno.test("a stream cut mid-burst and resumed with Last-Event-ID gets every event exactly once", async () => {
  await withInboxes(async ({ app }) => {
    const user = await newUser(app, "pro"); // 40 inboxes: over Free's 10
    const first = await streamOf(app, user);
    const burst = (async () => {
      for (let i = 0; i < 40; i++) await createInbox(app, user);
    })();
    await first.waitForFrames(10);
    first.close(); // mid-burst
    await first.ended;
    const seen = first.frames().map((f) => f.id!);
    const resumed = await streamOf(app, user, "", { "last-event-id": seen.at(-1)! });
    await burst;
    await resumed.waitForFrames(40 - seen.length, 10_000);
    const all = [...seen, ...resumed.frames().map((f) => f.id!)];
    const log = (await listEvents(app, user, "?limit=100")).data.map((e) => e.id);
    assert.equal(log.length, 40);
    assert.deepEqual(all, log, "every event once, in the log's order");
    resumed.close();
  });
});

Deno.test("a stream sends a keep-alive comment when nothing happens, and starts live without a cursor", async () => {
  await withInboxes(async ({ app }) => {
    const user = await newUser(app, "free");
    await createInbox(app, user); // before the stream: not replayed without a cursor
    const stream = await streamOf(app, user, "?types=inbox.created");
    await stream.waitForComment(5_000);
    assert.ok(stream.items.some((i) => i.kind === "comment" && i.text === "keep-alive"));
    assert.equal(stream.frames().length, 0);
    await createInbox(app, user);
    await stream.waitForFrames(1);
    stream.close();
    await waitUntil(
      async () => await metricValue(app.baseUrl, "event_streams") === 0,
      5_000,
      () => "the closed stream was not released",
    );
  }, { env: { EVENT_STREAM_KEEP_ALIVE_MS: "200" } });
});

Deno.test("a stream on one instance sees the events committed on another (NOTIFY through the hub)", async () => {
  const h = await startHarness({ listen: true });
  try {
    const other = await h.startInstance({ listen: true });
    const user = await newUser(h.app, "free");
    const stream = await streamOf(other, user);
    await waitUntil(
      async () => await metricValue(other.baseUrl, "event_streams") === 1,
      5_000,
      () => "not streaming",
    );
    const started = performance.now();
    for (let i = 0; i < 3; i++) await createInbox(h.app, user);
    await stream.waitForFrames(3, 10_000);
    assert.ok(performance.now() - started < 5_000, "woken by the NOTIFY, not by a keep-alive timer");
    stream.close();
  } finally {
    await h.close();
  }
});

Deno.test("twenty streams of one account, woken by the same commits, each get every frame whole and in order", async () => {
  await withInboxes(async ({ app }) => {
    const user = await newUser(app, "free");
    const streams = await Promise.all(Array.from({ length: 20 }, () => streamOf(app, user)));
    const created = [];
    for (let i = 0; i < 5; i++) created.push(await createInbox(app, user));
    for (const stream of streams) {
      await stream.waitForFrames(5);
      const frames = stream.frames();
      assert.deepEqual(frames.map((f) => f.event), Array(5).fill("inbox.created"));
      assert.deepEqual(frames.map((f) => (JSON.parse(f.data) as Envelope).data.inboxId), created.map((c) => c.id));
      assert.deepEqual(frames.map((f) => f.id), frames.map((f) => (JSON.parse(f.data) as Envelope).id));
      stream.close();
    }
  });
});
