/**
 * An event as a Server-Sent Events frame: `event`, `data` (the stored
 * envelope, one line of JSON) and `id`. Encoded once per stored event and
 * written as the same bytes to every stream that reads it: the streams of one
 * account woken by one commit share one read (events/service.ts), so one
 * commit with 1,000 streams open costs one encoding, not 1,000.
 */
import type { StoredEvent } from "./repo.ts";

const encoder = new TextEncoder();

/** The comment a stream sends after a silence, so that proxies keep it open. */
export const SSE_KEEP_ALIVE = encoder.encode(": keep-alive\n\n");
const encoded = new WeakMap<StoredEvent, Uint8Array>();

/** The frame's bytes; the same array for every caller with the same row. */
export function sseFrame(event: StoredEvent): Uint8Array {
  let bytes = encoded.get(event);
  if (!bytes) {
    // The envelope is JSON.stringify output: a line break inside it is escaped, so one data line holds it.
    const data = event.payload.split(/\r\n|\r|\n/).map((line) => `data: ${line}`).join("\n");
    bytes = encoder.encode(`event: ${event.type}\n${data}\nid: ${event.id}\n\n`);
    encoded.set(event, bytes);
  }
  return bytes;
}
