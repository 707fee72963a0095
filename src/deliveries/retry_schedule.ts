/**
 * When a failed attempt is tried again: +10 s, +1 min, +5 min, +30 min, +2 h,
 * +6 h, +24 h, each with ±20 % jitter so receivers that failed together are
 * not retried together. A receiver's Retry-After can push a retry later, never
 * earlier, and never beyond a day. Eight attempts at most. A 429 or 503 with
 * Retry-After also holds every attempt of the webhook (`holdUntil`).
 */

export const RETRY_DELAYS_MS = [10_000, 60_000, 300_000, 1_800_000, 7_200_000, 21_600_000, 86_400_000] as const;
/** The first attempt and one per scheduled retry. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
const JITTER = 0.2;
const MAX_DELAY_MS = 86_400_000;

/**
 * Delay before the attempt after `failedAttempt` (1-based), or undefined when
 * that was the last one.
 */
export function retryDelayMs(
  failedAttempt: number,
  retryAfterSeconds?: number,
  random: () => number = Math.random,
): number | undefined {
  const base = RETRY_DELAYS_MS[failedAttempt - 1];
  if (base === undefined) return undefined;
  const jittered = Math.round(base * (1 - JITTER + 2 * JITTER * random()));
  const asked = retryAfterSeconds !== undefined ? retryAfterSeconds * 1000 : 0;
  return Math.min(Math.max(jittered, asked), MAX_DELAY_MS);
}

/** The statuses whose Retry-After holds the whole webhook: too many requests, and unavailable. */
const HOLDING_STATUSES: ReadonlySet<number> = new Set([429, 503]);

/**
 * Until when a receiver's answer at `now` holds every attempt of its webhook:
 * `Retry-After` seconds from then (a date already read as such), at most a
 * day, on a 429 or a 503 only. Undefined for no hold: another status, no
 * (or an unreadable) Retry-After, or one of 0.
 */
export function holdUntil(
  status: number | null,
  retryAfterSeconds: number | undefined,
  now: Date,
): Date | undefined {
  if (status === null || !HOLDING_STATUSES.has(status) || !retryAfterSeconds) return undefined;
  return new Date(now.getTime() + Math.min(retryAfterSeconds * 1000, MAX_DELAY_MS));
}
