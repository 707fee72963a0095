/**
 * A Server-Sent Events response whose frames are enqueued straight into the
 * response body: no TransformStream and no promise per frame between the
 * writer and the server, which matters when one commit wakes 1,000 streams
 * that each write the same frame. Backpressure is kept: once a client has
 * `HIGH_WATER_FRAMES` frames unread, `write` waits until it reads on. The
 * client going away (the body cancelled) aborts the writer's signal.
 */

/** What a stream's producer writes to. */
export interface SseWriter {
  /** Enqueues a frame (complete SSE bytes); resolves at once unless the client is behind. */
  write(frame: Uint8Array): Promise<void>;
  /** Enqueues a frame without waiting; false when the client has fallen behind (the caller stops offering). */
  offer(frame: Uint8Array): boolean;
  /** Aborts when the client has gone. */
  signal: AbortSignal;
}

/** Frames a client may leave unread before the producer waits for it. */
const HIGH_WATER_FRAMES = 64;

const HEADERS = {
  "content-type": "text/event-stream",
  // Events carry mail content: no cache may keep them (the app sets the same on all of /api).
  "cache-control": "no-store",
  // Proxies (nginx) would otherwise buffer the stream.
  "x-accel-buffering": "no",
};

/** Responds with the frames `produce` writes until it returns (the response then ends) or the client goes. */
export function sseResponse(produce: (out: SseWriter) => Promise<void>): Response {
  const gone = new AbortController();
  let resume: (() => void) | undefined;
  const wake = () => {
    resume?.();
    resume = undefined;
  };
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const out: SseWriter = {
        signal: gone.signal,
        write(frame) {
          if (out.offer(frame)) return Promise.resolve();
          return new Promise<void>((done) => resume = done);
        },
        offer(frame) {
          if (gone.signal.aborted) return true;
          controller.enqueue(frame);
          return (controller.desiredSize ?? 1) > 0;
        },
      };
      produce(out).catch(() => {}).finally(() => {
        wake();
        if (!gone.signal.aborted) controller.close();
      });
    },
    pull: wake,
    cancel() {
      gone.abort();
      wake();
    },
  }, new CountQueuingStrategy({ highWaterMark: HIGH_WATER_FRAMES }));
  return new Response(body, { status: 200, headers: HEADERS });
}
