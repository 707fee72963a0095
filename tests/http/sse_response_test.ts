/**
 * The SSE response: frames go straight into the body, a client that does not
 * read holds its producer at a bound in bytes, what would be queued beyond
 * the hard bound ends the stream, and leaving (or the caller's signal) aborts it.
 */
import assert from "node:assert/strict";
import { HIGH_WATER_BYTES, MAX_QUEUED_BYTES, sseResponse, type SseWriter } from "../../src/http/sse_response.ts";

/** A frame of about 1 KiB whose text says its number. */
const frame = (i: number) => new TextEncoder().encode(`data: ${String(i).padEnd(1018, ".")}\n\n`);
const FRAME_BYTES = frame(0).byteLength;
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
  const bound = Math.ceil(HIGH_WATER_BYTES / FRAME_BYTES);
  assert.ok(written <= bound, `the producer went on while nobody read (${written} written, bound ${bound})`);
  assert.ok(written >= bound - 1, `the producer stopped too early (${written} of ${bound})`);
  const reader = res.body!.getReader();
  const text: string[] = [];
  while (true) {
    const { value, done } = await reader.read();
    if (done) break;
    text.push(new TextDecoder().decode(value));
  }
  assert.equal(written, 200);
  assert.equal(
    text.join(""),
    Array.from({ length: 200 }, (_, i) => new TextDecoder().decode(frame(i))).join(""),
    "all, in order",
  );
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

Deno.test("offers past the high-water mark say the client is behind; what would be queued past the hard bound ends the stream", async () => {
  let writer: SseWriter | undefined;
  let release: () => void = () => {};
  const res = sseResponse((out) => {
    writer = out;
    return new Promise<void>((done) => release = done);
  });
  await ticks();
  const out = writer!;
  let offered = 0;
  while (out.offer(frame(offered))) offered++;
  assert.ok(offered * FRAME_BYTES < HIGH_WATER_BYTES, "behind once the high-water mark is reached");
  // Offers go on being queued (a live group stops offering; a large frame may still come) up to the hard bound.
  const big = new Uint8Array(MAX_QUEUED_BYTES);
  assert.equal(out.signal.aborted, false);
  out.offer(big);
  assert.equal(out.signal.aborted, true, "more than MAX_QUEUED_BYTES queued ends the stream");
  release();
  // The client still reads what was queued before the cut, then the end.
  const reader = res.body!.getReader();
  let received = 0;
  while (true) {
    const { value, done } = await reader.read();
    if (done) break;
    received += value.byteLength;
  }
  assert.equal(
    received,
    (offered + 1) * FRAME_BYTES,
    "what was queued, not the frame that would have passed the bound",
  );
});

Deno.test("a frame larger than the hard bound still goes out alone: the stream can move on", async () => {
  const big = new Uint8Array(MAX_QUEUED_BYTES * 2).fill(0x61);
  const res = sseResponse(async (out) => {
    await out.write(big);
    await out.write(frame(1));
  });
  const got = new Uint8Array(await new Response(res.body).arrayBuffer());
  assert.equal(got.byteLength, big.byteLength + FRAME_BYTES);
});

Deno.test("the caller's signal ends the stream and aborts the producer", async () => {
  const stop = new AbortController();
  let ended = false;
  const res = sseResponse(async (out) => {
    await out.write(frame(0));
    await new Promise((done) => out.signal.addEventListener("abort", done));
    ended = true;
  }, { until: stop.signal });
  const reader = res.body!.getReader();
  assert.equal((await reader.read()).value?.byteLength, FRAME_BYTES);
  stop.abort();
  assert.equal((await reader.read()).done, true, "the response ends");
  await ticks();
  assert.equal(ended, true);
});

Deno.test("a write that waits longer than stallMs for its client ends the stream", async () => {
  let ended = false;
  const res = sseResponse(async (out) => {
    while (!out.signal.aborted) await out.write(frame(0));
    ended = true;
  }, { stallMs: 50 });
  await new Promise((done) => setTimeout(done, 200));
  assert.equal(ended, true, "the producer was let go");
  // What was queued before the cut is still readable, then the end.
  const got = new Uint8Array(await new Response(res.body).arrayBuffer());
  assert.ok(got.byteLength >= HIGH_WATER_BYTES - FRAME_BYTES && got.byteLength <= HIGH_WATER_BYTES + FRAME_BYTES);
});
