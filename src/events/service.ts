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
import { nextStamp } from "../notifications/waiters.ts";
import type { EventStreams } from "./streams.ts";

/** What the event rules need. */
export interface EventDeps {
  sql: Sql;
  streams: EventStreams;
}

/** Events read per query while a stream catches up. */
const STREAM_BATCH = 500;

/** The 400 for a cursor that is not one of the account's (kept) events. */
function unknownCursor(path: string): ApiError {
  return new ApiError(400, "VALIDATION_ERROR", "Invalid query parameters", [
    { path, message: "Not an event of this account (or no longer kept)" },
  ]);
}

/** Where `after` (an event id) stands in the account's log; 400 when it is not one of its events. */
export async function cursorOf(deps: EventDeps, accountId: string, after: string, path = "after"): Promise<string> {
  const seq = await repo.eventSeq(deps.sql, accountId, after);
  if (seq === undefined) throw unknownCursor(path);
  return seq;
}

/** A page of the account's events after `after`, oldest first; `nextCursor` is the last id returned. */
export async function listEvents(
  deps: EventDeps,
  accountId: string,
  query: { after?: string | undefined; types: string[]; limit?: number | undefined },
): Promise<{ data: string[]; nextCursor: string | null }> {
  const afterSeq = query.after === undefined ? undefined : await cursorOf(deps, accountId, query.after);
  const rows = await repo.listEvents(deps.sql, accountId, afterSeq, query.types, query.limit ?? DEFAULT_PAGE_SIZE);
  // The envelopes as stored: the exact JSON a webhook receives, not parsed and serialised again.
  return { data: rows.map((r) => r.payload), nextCursor: rows.at(-1)?.id ?? null };
}

/**
 * Reads in progress, per pool: the streams of one account woken by the same
 * commit stand at the same place in the log, and share one query instead of
 * sending one each (1,000 streams, 1,000 queries through a pool of 10, put
 * the last frame 80 ms after the commit). A stream joins only a read that
 * started after the latest wake-up of its account at the time it armed its
 * waiter (`ArmedWait.lastWake`): such a read sees every event notified
 * before, and any later one wakes the stream again.
 */
const reading = new WeakMap<Sql, Map<string, { started: number; rows: Promise<repo.StoredEvent[]> }>>();

function readShared(
  sql: Sql,
  accountId: string,
  cursor: string,
  types: string[],
  lastWake: number,
): Promise<repo.StoredEvent[]> {
  let pool = reading.get(sql);
  if (!pool) reading.set(sql, pool = new Map());
  const key = `${accountId} ${cursor} ${types.join(",")}`;
  const shared = pool.get(key);
  if (shared && shared.started > lastWake) return shared.rows;
  const entry = { started: nextStamp(), rows: repo.listEvents(sql, accountId, cursor, types, STREAM_BATCH) };
  pool.set(key, entry);
  entry.rows.finally(() => pool.get(key) === entry && pool.delete(key)).catch(() => {});
  return entry.rows;
}

/**
 * Follows the account's log from `afterSeq` (the end of the log when
 * undefined: live only), calling `write` for each event in order and `ping`
 * after `keepAliveMs` without one, until `signal` aborts. Between reads it
 * holds no database connection.
 */
export async function followEvents(
  deps: EventDeps,
  accountId: string,
  from: { afterSeq: string | undefined; types: string[] },
  out: { write(event: repo.StoredEvent): Promise<void>; ping(): Promise<void> },
  keepAliveMs: number,
  signal: AbortSignal,
): Promise<void> {
  let cursor = from.afterSeq ?? await repo.lastSeq(deps.sql, accountId);
  while (!signal.aborted) {
    // Armed before the read: events committed between the read and the wait still wake it.
    const armed = deps.streams.arm(accountId);
    try {
      const rows = await readShared(deps.sql, accountId, cursor, from.types, armed.lastWake);
      for (const row of rows) {
        await out.write(row); // the row the streams woken with this one share
        cursor = row.seq;
      }
      if (rows.length === STREAM_BATCH) continue; // more to replay
      const end = await armed.wait(keepAliveMs, signal);
      // Shutting down: the stream ends, and the client reconnects (to another instance) with Last-Event-ID.
      if (end === "closed") return;
      if (end === "timeout") await out.ping();
    } finally {
      armed.disarm();
    }
  }
}
