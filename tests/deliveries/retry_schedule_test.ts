/** The retry schedule: +10 s, +1 min, +5 min, +30 min, +2 h, +6 h, +24 h with ±20 % jitter, then stop. */
import assert from "node:assert/strict";
import { MAX_ATTEMPTS, RETRY_DELAYS_MS, retryDelayMs } from "../../src/deliveries/retry_schedule.ts";

Deno.test("each failed attempt maps to the design's delay, within ±20 %", () => {
  const expected = [10_000, 60_000, 300_000, 1_800_000, 7_200_000, 21_600_000, 86_400_000];
  assert.deepEqual([...RETRY_DELAYS_MS], expected);
  assert.equal(MAX_ATTEMPTS, 8);
  expected.forEach((base, i) => {
    assert.equal(retryDelayMs(i + 1, undefined, () => 0), Math.round(base * 0.8), `attempt ${i + 1} low`);
    assert.equal(retryDelayMs(i + 1, undefined, () => 0.5), base, `attempt ${i + 1} middle`);
    assert.equal(
      retryDelayMs(i + 1, undefined, () => 1),
      Math.round(base * 1.2) > 86_400_000 ? 86_400_000 : Math.round(base * 1.2),
    );
  });
});

Deno.test("after the eighth attempt there is no retry: attempts are bounded", () => {
  assert.equal(retryDelayMs(8), undefined);
  assert.equal(retryDelayMs(9), undefined);
  assert.equal(retryDelayMs(0), undefined);
});

Deno.test("jitter spreads retries: real randomness gives different delays inside the band", () => {
  const seen = new Set<number>();
  for (let i = 0; i < 200; i++) {
    const d = retryDelayMs(2)!;
    assert.ok(d >= 48_000 && d <= 72_000, String(d));
    seen.add(d);
  }
  assert.ok(seen.size > 50);
});

Deno.test("Retry-After can push a retry later, never earlier, and never past a day", () => {
  assert.equal(retryDelayMs(1, 120, () => 0.5), 120_000, "later than +10 s when asked");
  assert.equal(retryDelayMs(3, 5, () => 0.5), 300_000, "not earlier than the schedule");
  assert.equal(retryDelayMs(1, 10 * 86_400, () => 0.5), 86_400_000, "bounded by a day");
});
