/** The SSE response: frames go straight into the body, a client that does not read holds its producer, and leaving aborts it. */
import assert from "node:assert/strict";
import { sseResponse, type SseWriter } from "../../src/http/sse_response.ts";

const frame = (i: number) => new TextEncoder().encode(`data: ${i}\n\n`);
const ticks = async (n = 10) => {
  for (let i = 0; i < n; i++) await new Promise((done) => setTimeout(done, 0));
};

Deno.test("a client that does not read holds the producer at the high-water mark; reading lets it go on", async () => {
  let written = 0;
  let writer: SseWriter | undefined;
  const res = sseResponse(async (out) => {
    writer = out;
    for (let i = 0; i < 200; i++) {
      await out.write(frame(i));
      written++;
    }
  });
  assert.equal(res.headers.get("content-type"), "text/event-stream");
  await ticks();
  assert.ok(written < 200, `the producer went on while nobody read (${written} written)`);
  assert.ok(written >= 60, `the producer stopped too early (${written})`);
  const reader = res.body!.getReader();
  const text: string[] = [];
  while (true) {
    const { value, done } = await reader.read();
    if (done) break;
    text.push(new TextDecoder().decode(value));
  }
  assert.equal(written, 200);
  assert.equal(text.join(""), Array.from({ length: 200 }, (_, i) => `data: ${i}\n\n`).join(""), "all, in order");
  assert.equal(writer!.signal.aborted, false);
});

Deno.test("the client going away aborts the producer's signal and releases a held write", async () => {
  let ended = false;
  const res = sseResponse(async (out) => {
    while (!out.signal.aborted) await out.write(frame(0));
    ended = true;
  });
  await ticks();
  assert.equal(ended, false);
  await res.body!.cancel();
  await ticks();
  assert.equal(ended, true);
});
