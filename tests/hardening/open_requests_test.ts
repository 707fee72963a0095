/**
 * Per-tenant bounds on long requests, over every instance on the database:
 * at most EVENT_STREAMS_PER_ACCOUNT open event streams and
 * MESSAGE_WAITS_PER_ACCOUNT pending waits per account; one more is 429
 * RATE_LIMITED with Retry-After, another account is not affected, a closed
 * request gives its place back at once, and a wait answered at once does not
 * count. The rows of an instance that died stop counting when their lease
 * passes.
 */
import assert from "node:assert/strict";
import { newUser, type TestApp, type User } from "../_helpers/app.ts";
import { expectError } from "../_helpers/expect.ts";
import { withService } from "../_helpers/harness.ts";
import { openSse, type SseStream } from "../_helpers/sse.ts";
import { waitUntil } from "../_helpers/wait.ts";
import { createInbox } from "../inboxes/_support.ts";
import { waitersGauge } from "../messages/_support.ts";
import { createOpenRequests, EVENT_STREAMS } from "../../src/rate_limit/open_requests.ts";

const BOUNDS = { EVENT_STREAMS_PER_ACCOUNT: "2", MESSAGE_WAITS_PER_ACCOUNT: "2" };

function stream(app: TestApp, user: User): Promise<SseStream> {
  return openSse(`${app.baseUrl}/api/events/stream`, { cookie: user.cookie });
}

async function openCount(app: TestApp, accountId: string, kind: string): Promise<number> {
  const rows = await app.deps.sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM open_requests WHERE account_id = ${accountId} AND kind = ${kind}`;
  return rows[0]!.n;
}

Deno.test("event streams: the bound holds over two instances; one more is 429 with Retry-After; a closed one frees its place", async () => {
  await withService({ env: BOUNDS }, async ({ app, startInstance }) => {
    const second = await startInstance();
    const user = await newUser(app, "free");
    const other = await newUser(app, "free");
    const a = await stream(app, user);
    const b = await stream(second, user);
    for (const instance of [app, second]) {
      const refused = await instance.request("/api/events/stream", { cookie: user.cookie });
      await expectError(refused, 429, "RATE_LIMITED");
      assert.equal(refused.headers.get("retry-after"), "5");
    }
    const theirs = await stream(app, other);
    assert.ok(theirs, "another account opens its own");
    a.close();
    await waitUntil(
      async () => await openCount(app, user.id, "event_stream") === 1,
      5_000,
      () => "place not given back",
    );
    const c = await stream(second, user);
    for (const s of [b, c, theirs]) s.close();
  });
});

Deno.test("message waits: holding waits count over two instances, one more is 429; a wait answered at once does not count", async () => {
  await withService({ env: BOUNDS }, async ({ app, startInstance }) => {
    const second = await startInstance();
    const user = await newUser(app, "free");
    const inbox = await createInbox(app, user);
    const stop = new AbortController();
    const wait = (instance: TestApp, timeoutMs = "20000", signal?: AbortSignal) =>
      instance.request(`/api/inboxes/${inbox.id}/messages/wait?timeoutMs=${timeoutMs}`, {
        cookie: user.cookie,
        ...(signal ? { signal } : {}),
      });
    const held = [wait(app, "20000", stop.signal), wait(second, "20000", stop.signal)];
    await waitUntil(async () => await openCount(app, user.id, "message_wait") === 2, 5_000, () => "waits not held");
    const refused = await wait(app);
    await expectError(refused, 429, "RATE_LIMITED");
    assert.equal(refused.headers.get("retry-after"), "1");
    // Answered at once: nothing held, nothing counted.
    const atOnce = await wait(second, "0");
    assert.equal(atOnce.status, 204);
    await atOnce.body?.cancel();
    stop.abort();
    await Promise.allSettled(held);
    await waitUntil(
      async () => await openCount(app, user.id, "message_wait") === 0,
      5_000,
      () => "places not given back",
    );
    await waitUntil(async () => await waitersGauge(app) === 0, 5_000, () => "waiters left");
    const again = await wait(app, "50");
    assert.equal(again.status, 204);
    await again.body?.cancel();
  });
});

Deno.test("the rows of an instance that stopped renewing them stop counting when their lease passes", async () => {
  await withService({}, async ({ app }) => {
    const user = await newUser(app, "free");
    // An instance that dies: it opened requests and will never close or renew them.
    const dead = createOpenRequests({ sql: app.deps.sql }, { leaseMs: 300 });
    await dead.open(user.id, EVENT_STREAMS, 2);
    await dead.open(user.id, EVENT_STREAMS, 2);
    const live = createOpenRequests({ sql: app.deps.sql }, { leaseMs: 30_000 });
    await assert.rejects(
      live.open(user.id, EVENT_STREAMS, 2),
      (err: Error & { status?: number }) => err.status === 429,
    );
    await new Promise((done) => setTimeout(done, 400));
    const close = await live.open(user.id, EVENT_STREAMS, 2);
    assert.equal(await openCount(app, user.id, "event_stream"), 1, "the dead instance's rows are gone");
    close();
    await live.stop();
  });
});

Deno.test("a heartbeat keeps an instance's open requests counted past their first lease", async () => {
  await withService({}, async ({ app }) => {
    const user = await newUser(app, "free");
    const instance = createOpenRequests({ sql: app.deps.sql }, { leaseMs: 300, heartbeatMs: 50 });
    instance.start();
    try {
      await instance.open(user.id, EVENT_STREAMS, 1);
      await new Promise((done) => setTimeout(done, 700));
      const other = createOpenRequests({ sql: app.deps.sql }, { leaseMs: 300 });
      await assert.rejects(
        other.open(user.id, EVENT_STREAMS, 1),
        (err: Error & { status?: number }) => err.status === 429,
      );
    } finally {
      await instance.stop();
    }
    assert.equal(await openCount(app, user.id, "event_stream"), 0, "stop closes what it held");
  });
});
