/** SQL of the sliding-window rate log. */
import type { Db } from "../db/client.ts";

/** Serialises all checks of one bucket until the transaction ends. */
export async function lockBucket(tx: Db, bucket: string): Promise<void> {
  // A transaction-level advisory lock: two instances cannot both see room for
  // the last slot. hashtextextended gives a 64-bit key, so buckets rarely share one.
  await tx`SELECT pg_advisory_xact_lock(hashtextextended(${bucket}, 0))`;
}

/** Hits inside the window: how many, and when the oldest happened. */
export async function windowStats(
  db: Db,
  bucket: string,
  since: Date,
): Promise<{ count: number; oldest: Date | null }> {
  const rows = await db<{ count: number; oldest: Date | null }[]>`
    SELECT count(*)::int AS count, min(hit_at) AS oldest
    FROM rate_limit_hits WHERE bucket = ${bucket} AND hit_at > ${since}`;
  return rows[0]!;
}

/** Records one hit. */
export async function insertHit(db: Db, bucket: string, at: Date): Promise<void> {
  await db`INSERT INTO rate_limit_hits (bucket, hit_at) VALUES (${bucket}, ${at})`;
}

/** Deletes hits older than any window still in use (cron). */
export async function purgeHits(db: Db, before: Date): Promise<number> {
  const rows = await db`DELETE FROM rate_limit_hits WHERE hit_at < ${before} RETURNING 1`;
  return rows.length;
}

/** Withdraws one hit recorded at `at` (an attempt that turned out not to count). */
export async function deleteOneHit(db: Db, bucket: string, at: Date): Promise<void> {
  // Hits have no id: any one of identical (bucket, hit_at) rows is the same hit.
  await db`
    DELETE FROM rate_limit_hits WHERE ctid = (
      SELECT ctid FROM rate_limit_hits WHERE bucket = ${bucket} AND hit_at = ${at} LIMIT 1
    )`;
}

/** Forgets every hit of a bucket. */
export async function deleteHits(db: Db, bucket: string): Promise<void> {
  await db`DELETE FROM rate_limit_hits WHERE bucket = ${bucket}`;
}

/** A bucket's lockout: how many in a row, and until when the current (or last) one runs. */
export interface LockoutRow {
  bucket: string;
  strikes: number;
  lockedUntil: Date;
}

/** The lockouts of these buckets, running or over. */
export async function findLockouts(db: Db, buckets: readonly string[]): Promise<LockoutRow[]> {
  return await db<LockoutRow[]>`
    SELECT bucket, strikes, locked_until FROM rate_limit_lockouts WHERE bucket = ANY(${buckets as string[]}::text[])`;
}

/** Starts (or extends the series of) a bucket's lockout. */
export async function upsertLockout(db: Db, l: LockoutRow): Promise<void> {
  await db`
    INSERT INTO rate_limit_lockouts (bucket, strikes, locked_until)
    VALUES (${l.bucket}, ${l.strikes}, ${l.lockedUntil})
    ON CONFLICT (bucket) DO UPDATE SET strikes = excluded.strikes, locked_until = excluded.locked_until`;
}

/** Forgets a bucket's lockouts (its strikes start again from nothing). */
export async function deleteLockout(db: Db, bucket: string): Promise<void> {
  await db`DELETE FROM rate_limit_lockouts WHERE bucket = ${bucket}`;
}

/** Deletes lockouts that ended before `before` (cron). */
export async function purgeLockouts(db: Db, before: Date): Promise<number> {
  const rows = await db`DELETE FROM rate_limit_lockouts WHERE locked_until < ${before} RETURNING 1`;
  return rows.length;
}

/** Opens a request for the account if fewer than `limit` of its kind are open; false otherwise. */
export async function openRequest(
  db: Db,
  r: { id: string; accountId: string; kind: string; limit: number; leaseMs: number },
): Promise<boolean> {
  const rows = await db<{ opened: boolean }[]>`
    SELECT open_requests_open(${r.id}, ${r.accountId}, ${r.kind}, ${r.limit}, ${r.leaseMs} * interval '1 millisecond')
      AS opened`;
  return rows[0]!.opened;
}

/** Closes open requests (their requests ended). */
export async function closeRequests(db: Db, ids: string[]): Promise<void> {
  await db`DELETE FROM open_requests WHERE id = ANY(${ids}::text[])`;
}

/** Extends the lease of requests still open. */
export async function renewRequests(db: Db, ids: string[], leaseMs: number): Promise<void> {
  await db`
    UPDATE open_requests SET lease_until = clock_timestamp() + ${leaseMs} * interval '1 millisecond'
    WHERE id = ANY(${ids}::text[])`;
}
