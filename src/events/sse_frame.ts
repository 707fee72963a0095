/**
 * An event as a Server-Sent Events frame: `event`, `data` (the stored
 * envelope, one line of JSON) and `id`. Encoded once per stored event and
 * written as the same bytes to every stream that reads it: the streams of one
 * account woken by one commit share one read (events/service.ts), so one
 * commit with 1,000 streams open costs one encoding, not 1,000.
 */
import type { RawEvent } from "./repo.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const LF = 0x0a;
const CR = 0x0d;

/** The comment a stream sends after a silence, so that proxies keep it open. */
export const SSE_KEEP_ALIVE = encoder.encode(": keep-alive\n\n");
const encoded = new WeakMap<RawEvent, Uint8Array>();

/** The frame's bytes; the same array for every caller with the same row (a live group's streams). */
export function sseFrame(event: RawEvent): Uint8Array {
  let bytes = encoded.get(event);
  if (!bytes) {
    bytes = sseFrames([event]);
    encoded.set(event, bytes);
  }
  return bytes;
}

/**
 * The frames of several events as one array (a stream's replay writes a read
 * at a time): each payload's bytes are copied once, into it, whatever their
 * size, and one chunk of up to a read's bytes goes to the server instead of a
 * chunk per event.
 */
export function sseFrames(events: RawEvent[]): Uint8Array {
  const parts: Uint8Array[] = [];
  let size = 0;
  for (const event of events) {
    for (const part of frameParts(event)) {
      parts.push(part);
      size += part.byteLength;
    }
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}

function frameParts(event: RawEvent): Uint8Array[] {
  const { payload } = event;
  const tail = encoder.encode(`\nid: ${event.id}\n\n`);
  // The envelope is JSON.stringify output: a line break inside it is escaped, so one data line holds it.
  if (!payload.includes(LF) && !payload.includes(CR)) {
    return [encoder.encode(`event: ${event.type}\ndata: `), payload, tail];
  }
  const text = decoder.decode(payload).split(/\r\n|\r|\n/).join("\ndata: ");
  return [encoder.encode(`event: ${event.type}\ndata: ${text}`), tail];
}
