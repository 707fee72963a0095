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
