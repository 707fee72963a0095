/**
 * `events.stream()` of the typed client against the real service: when the
 * connection drops mid-burst (a fetch whose body breaks after a few events),
 * the iterator reconnects with Last-Event-ID and yields every event exactly
 * once, in the log's order.
 */
import assert from "node:assert/strict";
import { createClient } from "../../src/client/mod.ts";
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
