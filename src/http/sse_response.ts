/**
 * A Server-Sent Events response whose frames are enqueued straight into the
 * response body: no TransformStream and no promise per frame between the
 * writer and the server, which matters when one commit wakes 1,000 streams
 * that each write the same frame.
 *
 * What is queued for a client is bounded in bytes, not frames (one event may
 * be a few bytes or a megabyte): once `HIGH_WATER_BYTES` are unread, `write`
 * waits until the client reads on, and `offer` says the client has fallen
 * behind. Whatever is queued beyond `MAX_QUEUED_BYTES` (possible only with
 * frames larger than the high-water mark) ends the stream, and so does a
 * client that leaves a `write` waiting for `stallMs`: its client resumes
 * with Last-Event-ID and loses nothing. The client going away (the body
 * cancelled), or `until` aborting (its credential was revoked), aborts the
 * writer's signal and ends the response.
 */

/** What a stream's producer writes to. */
export interface SseWriter {
  /** Enqueues a frame (complete SSE bytes); resolves at once unless the client is behind. */
  write(frame: Uint8Array): Promise<void>;
  /** Enqueues a frame without waiting; false when the client has fallen behind (the caller stops offering). */
  offer(frame: Uint8Array): boolean;
  /** Aborts when the client has gone, or the stream was ended for it. */
  signal: AbortSignal;
}

/**
 * Unread bytes at which a producer waits (`write`) or is told its client is
 * behind (`offer`). What a stream holds is this plus what the server took
 * for the socket; 20 streams whose clients do not read, replaying 20 MB
 * each, added 65-80 MiB to the service at 16 KiB, 77-81 at 32 KiB and 90-100
 * at 64 KiB (peak RSS, 1 KB and 40 KB events); 32 KiB keeps a replay's reads
 * few (events/fanout.ts `STREAM_READ_BYTES`, the same size) under that bound.
 */
export const HIGH_WATER_BYTES = 32 * 1024;
/** Unread bytes beyond which the stream is ended (the client resumes with Last-Event-ID). */
export const MAX_QUEUED_BYTES = 1024 * 1024;

const HEADERS = {
  "content-type": "text/event-stream",
  // Events carry mail content: no cache may keep them (the app sets the same on all of /api).
  "cache-control": "no-store",
  // Proxies (nginx) would otherwise buffer the stream.
  "x-accel-buffering": "no",
};

/** How a stream may be ended for its client. */
export interface SseOptions {
  /** Ends the stream (a revoked credential). */
  until?: AbortSignal;
  /**
   * Ends the stream when a `write` has waited this long for its client to
   * read: a client that stopped reading gives back its place (and the
   * buffers of its connection) and resumes with Last-Event-ID.
   */
  stallMs?: number;
}

/**
 * Responds with the frames `produce` writes until it returns (the response
 * then ends), the client goes, `until` aborts or the client stalls.
 */
export function sseResponse(
  produce: (out: SseWriter) => Promise<void>,
  { until, stallMs }: SseOptions = {},
): Response {
  const gone = new AbortController();
  let resume: (() => void) | undefined;
  const wake = () => {
    resume?.();
    resume = undefined;
  };
  let closed = false;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const close = () => {
        wake();
        if (closed) return;
        closed = true;
        controller.close();
      };
      // Ended for the client (revoked, stalled, or too much queued): the producer stops too.
      const end = () => {
        gone.abort();
        close();
      };
      const queued = () => HIGH_WATER_BYTES - (controller.desiredSize ?? 0);
      const out: SseWriter = {
        signal: gone.signal,
        write(frame) {
          if (out.offer(frame)) return Promise.resolve();
          return new Promise<void>((done) => {
            const stalled = stallMs === undefined ? undefined : setTimeout(end, stallMs);
            resume = () => {
              clearTimeout(stalled);
              done();
            };
          });
        },
        offer(frame) {
          if (gone.signal.aborted) return true;
          // A frame larger than the whole bound still goes out alone: the stream must be able to move on.
          if (queued() > 0 && queued() + frame.byteLength > MAX_QUEUED_BYTES) {
            end();
            return true;
          }
          controller.enqueue(frame);
          return (controller.desiredSize ?? 1) > 0;
        },
      };
      // Already revoked: the producer still runs (and sees its signal aborted), so that what it holds is released.
      if (until?.aborted) end();
      else until?.addEventListener("abort", end, { once: true });
      produce(out).catch(() => {}).finally(() => {
        until?.removeEventListener("abort", end);
        close();
      });
    },
    pull: wake,
    cancel() {
      closed = true;
      gone.abort();
      wake();
    },
  }, new ByteLengthQueuingStrategy({ highWaterMark: HIGH_WATER_BYTES }));
  return new Response(body, { status: 200, headers: HEADERS });
}
