/** The SSE frame of a stored event: its form, and one encoding per stored row. */
import assert from "node:assert/strict";
import { sseFrame } from "../../src/events/sse_frame.ts";

Deno.test("a stored event becomes event, data and id lines and a blank line; a row is encoded once", () => {
  const row = { id: "evt_1", seq: "7", type: "inbox.created", payload: '{"id":"evt_1","type":"inbox.created"}' };
  const bytes = sseFrame(row);
  assert.equal(
    new TextDecoder().decode(bytes),
    'event: inbox.created\ndata: {"id":"evt_1","type":"inbox.created"}\nid: evt_1\n\n',
  );
  assert.equal(sseFrame(row), bytes, "the same bytes for every stream that reads the row");
  assert.notEqual(sseFrame({ ...row }), bytes, "another row is encoded on its own");
  // A payload with a line break (never from JSON.stringify) still makes a valid frame.
  assert.equal(
    new TextDecoder().decode(sseFrame({ ...row, payload: "a\nb" })),
    "event: inbox.created\ndata: a\ndata: b\nid: evt_1\n\n",
  );
});
