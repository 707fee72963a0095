/**
 * `events.stream()` of the typed client against the real service: when the
 * connection drops mid-burst (a fetch whose body breaks after a few events),
 * the iterator reconnects with Last-Event-ID and yields every event exactly
 * once, in the log's order; while the service cannot be reached, or answers
 * 5xx, it tries again after a pause that doubles up to a cap, reporting each
 * try; a 4xx (a refused key) ends it.
 */
import assert from "node:assert/strict";
import { createClient, InboxServiceError, type StreamOpen, type StreamRetry } from "../../src/client/mod.ts";
import { generateApiKey } from "../../src/api_keys/key_format.ts";
import { freePort } from "../_helpers/ports.ts";
import { waitUntil } from "../_helpers/wait.ts";
import { newApiKey, newUser } from "../_helpers/app.ts";
import { withService } from "../_helpers/harness.ts";

/** A fetch whose first event-stream response breaks after `chunks` body chunks; later ones pass through. */
function breakingFetch(chunks: number) {
  let broken = false;
  const resumedWith: (string | null)[] = [];
  const fetcher = async (request: Request): Promise<Response> => {
    const res = await fetch(request);
    if (!res.headers.get("content-type")?.startsWith("text/event-stream")) return res;
    resumedWith.push(request.headers.get("last-event-id"));
    if (broken) return res;
    broken = true;
    const reader = res.body!.getReader();
    let n = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (n++ >= chunks) {
          await reader.cancel();
          controller.error(new TypeError("connection reset"));
          return;
        }
        const { value, done } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      },
    });
    return new Response(body, { status: res.status, headers: res.headers });
  };
  return { fetcher, resumedWith };
}

Deno.test("events.stream() resumes after a dropped connection with Last-Event-ID: every event once, in order", async () => {
  await withService({ systemClock: true }, async ({ app }) => {
    const user = await newUser(app, "pro");
    const { key } = await newApiKey(app, user);
    const { fetcher, resumedWith } = breakingFetch(3);
    const client = createClient({ baseUrl: app.baseUrl, apiKey: key, fetch: fetcher });
    const plain = createClient({ baseUrl: app.baseUrl, apiKey: key });
    const first = (await plain.inboxes.create({})).data!;
    const start = (await plain.events.list()).data!.data[0]!;
    assert.equal(start.data.inboxId, first.id);

    const stop = new AbortController();
    const seen: string[] = [];
    const following = (async () => {
      for await (const event of client.events.stream({ after: start.id, signal: stop.signal, retryMs: 50 })) {
        seen.push(event.id);
        if (seen.length === 12) break;
      }
    })();
    for (let i = 0; i < 12; i++) await plain.inboxes.create({});
    await following;
    const log = (await plain.events.list({ after: start.id, limit: 100 })).data!.data.map((e) => e.id);
    assert.deepEqual(seen, log, "each event once, in the log's order");
    assert.equal(resumedWith.length, 2, "one drop, one reconnection");
    assert.equal(resumedWith[0], start.id);
    assert.ok(resumedWith[1] && log.includes(resumedWith[1]), "resumed after the last event it had yielded");
    stop.abort();
  });
});

Deno.test("events.stream() tries again while the service cannot be reached or answers 5xx, with a growing capped pause; a 401 ends it", async () => {
  await withService({ systemClock: true }, async ({ app }) => {
    const user = await newUser(app, "pro");
    const { key } = await newApiKey(app, user);

    // Nothing listens: every try fails, the pauses double up to the cap; the caller's signal ends it.
    const closed = `http://127.0.0.1:${freePort()}`;
    const retries: StreamRetry[] = [];
    const stop = new AbortController();
    const nowhere = createClient({ baseUrl: closed, apiKey: key }).events.stream({
      signal: stop.signal,
      retryMs: 10,
      maxRetryMs: 40,
      onRetry: (r) => {
        retries.push(r);
        if (retries.length === 5) stop.abort();
      },
    });
    for await (const _ of nowhere) assert.fail("no event from nowhere");
    assert.deepEqual(retries.map((r) => r.delayMs), [10, 20, 40, 40, 40]);
    assert.deepEqual(retries.map((r) => r.failures), [1, 2, 3, 4, 5]);
    for (const r of retries) {
      assert.equal(r.url, `${closed}/api/events/stream`);
      assert.equal(r.dropped, false);
      assert.match(String((r.error as Error).cause), /Connection refused/i);
    }

    // Two 503s (a restart behind a proxy), then the stream opens and an event comes.
    let unavailable = 2;
    const flaky = async (request: Request): Promise<Response> => {
      if (unavailable-- > 0) {
        return Response.json(
          { success: false, error: "Service temporarily unavailable", code: "SERVICE_UNAVAILABLE" },
          {
            status: 503,
          },
        );
      }
      return await fetch(request);
    };
    const opens: StreamOpen[] = [];
    const seen: StreamRetry[] = [];
    const client = createClient({ baseUrl: app.baseUrl, apiKey: key, fetch: flaky });
    const following = (async () => {
      for await (
        const event of client.events.stream({
          retryMs: 10,
          onOpen: (o) => opens.push(o),
          onRetry: (r) => seen.push(r),
        })
      ) {
        return event;
      }
      return undefined;
    })();
    await waitUntil(() => opens.length === 1, 10_000, () => JSON.stringify(seen));
    const created = await createClient({ baseUrl: app.baseUrl, apiKey: key }).inboxes.create({});
    assert.equal((await following)?.data.inboxId, created.data!.id);
    assert.deepEqual(seen.map((r) => [(r.error as InboxServiceError).status, r.delayMs]), [[503, 10], [503, 20]]);
    assert.equal(opens[0]!.failures, 2);

    // A refused key is not worth another try.
    const refused = createClient({ baseUrl: app.baseUrl, apiKey: generateApiKey().key }).events.stream({ retryMs: 10 });
    await assert.rejects(async () => {
      for await (const _ of refused) assert.fail("no event with a refused key");
    }, (err: unknown) => err instanceof InboxServiceError && err.status === 401 && err.body?.hint !== undefined);
  });
});
