/**
 * A sliding-window limiter kept in Postgres: exact "N per window" for every
 * instance on the database, surviving restarts.
 */
import type { Tx } from "../db/client.ts";
import * as repo from "./repo.ts";

/** A named limit: `limit` events per `windowSeconds`. */
export interface Policy {
  name: string;
  limit: number;
  windowSeconds: number;
}

/** The outcome of one check, with what the RateLimit headers report. */
export interface Decision {
  allowed: boolean;
  policy: Policy;
  /** Events left in the window after this one. */
  remaining: number;
  /** Seconds until the window has room again (when refused) or frees a slot. */
  resetSeconds: number;
}

/**
 * Counts the window and, when there is room and `record` is true, records one
 * event. Must run inside a transaction: the bucket lock lasts until it ends,
 * so a caller can do its own work (insert a webhook) before the slot is
 * visible to others.
 */
export async function checkAndRecord(
  tx: Tx,
  bucket: string,
  policy: Policy,
  now: Date,
  record = true,
): Promise<Decision> {
  const windowMs = policy.windowSeconds * 1000;
  await repo.lockBucket(tx, bucket);
  const { count, oldest } = await repo.windowStats(tx, bucket, new Date(now.getTime() - windowMs));
  // When the oldest hit in the window leaves it, a slot opens.
  const untilSlot = oldest ? Math.max(1, Math.ceil((oldest.getTime() + windowMs - now.getTime()) / 1000)) : 0;
  if (count >= policy.limit) {
    return { allowed: false, policy, remaining: 0, resetSeconds: untilSlot };
  }
  if (record) await repo.insertHit(tx, bucket, now);
  const used = count + (record ? 1 : 0);
  return {
    allowed: true,
    policy,
    remaining: Math.max(0, policy.limit - used),
    resetSeconds: oldest ? untilSlot : (used > 0 ? policy.windowSeconds : 0),
  };
}

/**
 * Headers of draft-ietf-httpapi-ratelimit-headers (structured fields):
 * `RateLimit-Policy: "name";q=10;w=60` and `RateLimit: "name";r=9;t=60`.
 */
export function rateLimitHeaders(d: Decision): Record<string, string> {
  const name = JSON.stringify(d.policy.name);
  return {
    "RateLimit-Policy": `${name};q=${d.policy.limit};w=${d.policy.windowSeconds}`,
    "RateLimit": `${name};r=${d.remaining};t=${d.resetSeconds}`,
  };
}
