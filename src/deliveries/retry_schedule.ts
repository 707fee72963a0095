/**
 * When a failed attempt is tried again: +10 s, +1 min, +5 min, +30 min, +2 h,
 * +6 h, +24 h, each with ±20 % jitter so receivers that failed together are
 * not retried together. A receiver's Retry-After can push a retry later, never
 * earlier, and never beyond a day. Eight attempts at most.
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
