/**
 * A reader of Server-Sent Events (the `text/event-stream` format of the WHATWG
 * HTML standard), for the event stream of the typed client and `listen`.
 * Hand-written and dependency-free, like the rest of src/client/, so that it
 * also runs on Node 20.
 */

/** One dispatched event: its `id`, `event` name and `data` (the data lines joined with "\n"). */
export interface SseMessage {
  id: string | undefined;
  event: string;
  data: string;
}

/** Yields the messages of an event-stream body as they arrive; comments (keep-alives) are skipped. */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage> {
  // A TextDecoder in streaming mode rather than a TextDecoderStream: the DOM
  // typings of the latter do not accept a byte stream (tsc, npm build).
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffer = "";
  let data: string[] = [];
  let event = "";
  let id: string | undefined;
  try {
    while (true) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end: number;
      // Lines end with CRLF, LF or CR; a blank line dispatches the message.
      while ((end = buffer.search(/\r\n|\n|\r/)) >= 0) {
        // A CR at the very end may be the first half of a CRLF still to come.
        if (buffer[end] === "\r" && end === buffer.length - 1) break;
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + (buffer.startsWith("\r\n", end) ? 2 : 1));
        if (line === "") {
          if (data.length > 0) yield { id, event: event || "message", data: data.join("\n") };
          data = [];
          event = "";
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const raw = colon < 0 ? "" : line.slice(colon + 1);
        const text = raw.startsWith(" ") ? raw.slice(1) : raw;
        if (field === "data") data.push(text);
        else if (field === "event") event = text;
        else if (field === "id" && !text.includes("\0")) id = text;
      }
    }
  } finally {
    // Ends the connection too when the consumer stops early.
    await reader.cancel().catch(() => {});
  }
}
