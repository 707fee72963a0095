/**
 * A failure throttle kept in Postgres, for guesses (failed logins): a bucket
 * allows `maxFailures` failures in a sliding window; the attempt that finds
 * the bucket full starts a lockout, during which every attempt is refused
 * unchecked (the right password too). Each lockout of a series lasts twice
 * the one before, up to a cap; a series is forgotten a day after its last
 * lockout ended, or when the caller says so (a successful login).
 *
 * An attempt is counted as a failure when it is admitted, before the caller
 * checks it, so parallel guesses cannot all slip in before the first failure
 * is written; the caller withdraws it when the attempt succeeds.
 */
import type { Tx } from "../db/client.ts";
import * as repo from "./repo.ts";

/** The rules of one kind of bucket. */
export interface FailurePolicy {
  /** Failures allowed in the window; the next attempt starts a lockout. */
  maxFailures: number;
  windowSeconds: number;
  /** The first lockout of a series; each further one doubles. */
  lockoutSeconds: number;
  /** No lockout lasts longer. */
  maxLockoutSeconds: number;
}

/** A bucket (e.g. one email, one client address) under a policy. */
export interface FailureKey {
  bucket: string;
  policy: FailurePolicy;
}

/** A series of lockouts is forgotten this long after its last lockout ended. */
export const LOCKOUT_MEMORY_MS = 86_400_000;

/** Whether an attempt may go ahead; when not, for how long every attempt is refused. */
export type Admission =
  | { allowed: true; at: Date }
  | { allowed: false; retryAfterSeconds: number };

/** How long the `strikes`-th lockout in a row lasts, in milliseconds. */
export function lockoutMs(policy: FailurePolicy, strikes: number): number {
  // 2^30 already exceeds any cap in seconds; the exponent is bounded so the product stays finite.
  const doubled = policy.lockoutSeconds * 2 ** Math.min(strikes - 1, 30);
  return Math.min(policy.maxLockoutSeconds, doubled) * 1000;
}

/**
 * Admits an attempt against every key, counting it as a failure of each, or
 * refuses it. Runs in the caller's transaction, which must commit even when
 * the attempt is refused: a lockout that starts here is part of the answer.
 */
export async function admitAttempt(tx: Tx, keys: readonly FailureKey[], now: Date): Promise<Admission> {
  // The same lock order in every transaction, so two attempts cannot deadlock.
  const sorted = [...keys].sort((a, b) => a.bucket < b.bucket ? -1 : a.bucket > b.bucket ? 1 : 0);
  for (const key of sorted) await repo.lockBucket(tx, key.bucket);
  const lockouts = new Map((await repo.findLockouts(tx, sorted.map((k) => k.bucket))).map((l) => [l.bucket, l]));

  const running = [...lockouts.values()].filter((l) => l.lockedUntil > now);
  if (running.length > 0) {
    return { allowed: false, retryAfterSeconds: secondsUntil(running.map((l) => l.lockedUntil), now) };
  }

  const starting: Date[] = [];
  for (const key of sorted) {
    const since = new Date(now.getTime() - key.policy.windowSeconds * 1000);
    const { count } = await repo.windowStats(tx, key.bucket, since);
    if (count < key.policy.maxFailures) continue;
    const last = lockouts.get(key.bucket);
    const strikes = last && last.lockedUntil.getTime() + LOCKOUT_MEMORY_MS > now.getTime() ? last.strikes + 1 : 1;
    const lockedUntil = new Date(now.getTime() + lockoutMs(key.policy, strikes));
    await repo.upsertLockout(tx, { bucket: key.bucket, strikes, lockedUntil });
    // The failures that filled the window are paid for by this lockout: after it, a new burst starts from zero.
    await repo.deleteHits(tx, key.bucket);
    starting.push(lockedUntil);
  }
  if (starting.length > 0) return { allowed: false, retryAfterSeconds: secondsUntil(starting, now) };

  for (const key of sorted) await repo.insertHit(tx, key.bucket, now);
  return { allowed: true, at: now };
}

/** Withdraws an admitted attempt from a bucket: it succeeded, so it was no failure. */
export async function withdrawAttempt(tx: Tx, bucket: string, at: Date): Promise<void> {
  await repo.deleteOneHit(tx, bucket, at);
}

/** Forgets a bucket's failures and lockouts, e.g. an email whose owner just logged in. */
export async function resetBucket(tx: Tx, bucket: string): Promise<void> {
  await repo.lockBucket(tx, bucket);
  await repo.deleteHits(tx, bucket);
  await repo.deleteLockout(tx, bucket);
}

/** Whole seconds until the latest of `times`, at least 1. */
function secondsUntil(times: readonly Date[], now: Date): number {
  const latest = Math.max(...times.map((t) => t.getTime()));
  return Math.max(1, Math.ceil((latest - now.getTime()) / 1000));
}
