/**
 * The event log as the API serves it: a page of an account's events after a
 * cursor, oldest first, and a live stream that replays from a cursor and then
 * follows the log as it grows, with no gap and no duplicate across the
 * switch (both read the same commit-ordered log; the stream's position only
 * moves over what it has written).
 */
import type { Sql } from "../db/client.ts";
import { ApiError } from "../errors.ts";
import { DEFAULT_PAGE_SIZE } from "../shared/cursor.ts";
import * as repo from "./repo.ts";
import type { Reach } from "../auth/reach.ts";
import { type LiveOut, STREAM_READ_BATCH, STREAM_READ_BYTES } from "./fanout.ts";
import type { EventStreams } from "./streams.ts";

/** What the event rules need. */
export interface EventDeps {
  sql: Sql;
  streams: EventStreams;
}

/** The 400 for a cursor that is not one of the account's (kept) events. */
function unknownCursor(path: string): ApiError {
  return new ApiError(400, "VALIDATION_ERROR", "Invalid query parameters", [
    { path, message: "Not an event of this account (or no longer kept)" },
  ]);
}

/** Where `after` (an event id) stands in the log; 400 when it is not one of the events `reach` sees. */
export async function cursorOf(deps: EventDeps, reach: Reach, after: string, path = "after"): Promise<string> {
  const seq = await repo.eventSeq(deps.sql, { ...reach, types: [] }, after);
  if (seq === undefined) throw unknownCursor(path);
  return seq;
}

/** A page of the account's events after `after`, oldest first; `nextCursor` is the last id returned. */
export async function listEvents(
  deps: EventDeps,
  reach: Reach,
  query: { after?: string | undefined; types: string[]; limit?: number | undefined },
): Promise<{ data: string[]; nextCursor: string | null }> {
  const afterSeq = query.after === undefined ? undefined : await cursorOf(deps, reach, query.after);
  const view = { accountId: reach.accountId, inboxIds: reach.inboxIds, types: query.types };
  const rows = await repo.listEvents(deps.sql, view, afterSeq, query.limit ?? DEFAULT_PAGE_SIZE);
  // The envelopes as stored: the exact JSON a webhook receives, not parsed and serialised again.
  return { data: rows.map((r) => r.payload), nextCursor: rows.at(-1)?.id ?? null };
}

/** Where a stream's frames go: written at the client's pace while it catches up, offered while it is live. */
export interface StreamOut extends LiveOut {
  /** Writes a read's frames, as one chunk; resolves once the client has room for more. */
  write(frames: Uint8Array): Promise<void>;
}

/**
 * Follows the account's log from `afterSeq` (the end of the log when
 * undefined: live only), writing each event in order, until `signal`
 * aborts. A stream catches up by its own reads, at its client's pace, then
 * follows the log live with the account's other streams of the same filter
 * (fanout.ts), and catches up on its own again whenever it falls behind.
 * While it waits it holds no database connection.
 */
export async function followEvents(
  deps: EventDeps,
  reach: Reach,
  from: { afterSeq: string | undefined; types: string[] },
  out: StreamOut,
  signal: AbortSignal,
): Promise<void> {
  const closed = deps.streams.opened();
  const view: repo.LogView = { accountId: reach.accountId, inboxIds: reach.inboxIds, types: from.types };
  try {
    let cursor = from.afterSeq ?? await repo.lastSeq(deps.sql, reach.accountId);
    while (!signal.aborted) {
      const { frames, lastSeq, more } = await repo.readFrames(
        deps.sql,
        view,
        cursor,
        STREAM_READ_BATCH,
        STREAM_READ_BYTES,
      );
      if (signal.aborted) return;
      if (lastSeq !== undefined) {
        await out.write(frames);
        cursor = lastSeq;
      }
      if (more) continue; // more to replay
      const end = await deps.streams.live.follow(view, cursor, out, signal);
      cursor = end.cursor;
      // Shutting down: the stream ends, and the client reconnects (to another instance) with Last-Event-ID.
      if (end.how === "closed") return;
      if (end.how === "failed") throw end.error;
    }
  } finally {
    closed();
  }
}
