/** The summaries the bench scripts take of their samples: one copy for every scenario. */
import { sleep } from "../_helpers/wait.ts";

/** The median of `xs` (the mean of the middle two for an even count). */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** The `p`th percentile of `sorted` (ascending): the sample at p % of the way, NaN for none. */
export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/**
 * Starts `total` calls of `emit` at `rate` a second, each on time whatever
 * the ones before it are doing, and resolves to each call's own time from its
 * start to its end in ms, sorted: the steady flows of the latency scenario and
 * `latency_ab.ts`, whose events commit one per call.
 */
export async function steadily(total: number, rate: number, emit: () => Promise<unknown>): Promise<number[]> {
  const started = performance.now();
  const timed: Promise<number>[] = [];
  for (let i = 0; i < total; i++) {
    const wait = started + (i * 1000) / rate - performance.now();
    if (wait > 0) await sleep(wait);
    const emitted = performance.now();
    timed.push(emit().then(() => performance.now() - emitted));
  }
  return (await Promise.all(timed)).sort((a, b) => a - b);
}
