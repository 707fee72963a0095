/** The SSE frame of a stored event: its form, one encoding per stored row, and a read's frames as one chunk. */
import assert from "node:assert/strict";
import { sseFrame, sseFrames } from "../../src/events/sse_frame.ts";

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (data: Uint8Array) => new TextDecoder().decode(data);

Deno.test("a stored event becomes event, data and id lines and a blank line; a row is encoded once", () => {
  const row = { id: "evt_1", seq: "7", type: "inbox.created", payload: bytes('{"id":"evt_1","type":"inbox.created"}') };
  const frame = sseFrame(row);
  assert.equal(text(frame), 'event: inbox.created\ndata: {"id":"evt_1","type":"inbox.created"}\nid: evt_1\n\n');
  assert.equal(sseFrame(row), frame, "the same bytes for every stream that reads the row");
  assert.notEqual(sseFrame({ ...row }), frame, "another row is encoded on its own");
  // A payload with a line break (never from JSON.stringify) still makes a valid frame.
  assert.equal(
    text(sseFrame({ ...row, payload: bytes("a\nb\r\nc\rd") })),
    "event: inbox.created\ndata: a\ndata: b\ndata: c\ndata: d\nid: evt_1\n\n",
  );
  // UTF-8 goes through as it was stored.
  assert.equal(
    text(sseFrame({ ...row, payload: bytes('{"s":"ünï ✓"}') })),
    'event: inbox.created\ndata: {"s":"ünï ✓"}\nid: evt_1\n\n',
  );
});

Deno.test("a read's events become one chunk: the frames of each, in order", () => {
  const rows = ["a", "b\nc", "d"].map((payload, i) => ({
    id: `evt_${i}`,
    seq: String(i),
    type: "t",
    payload: bytes(payload),
  }));
  assert.equal(text(sseFrames(rows)), rows.map((r) => text(sseFrame(r))).join(""));
  assert.equal(sseFrames([]).byteLength, 0);
});
