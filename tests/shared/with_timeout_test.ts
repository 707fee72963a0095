/**
 * withTimeout: the value when the promise is first, the fallback when the
 * timer is, rejections passed through. The timers are long where the promise
 * wins: Deno's op sanitizer fails a test that leaves one pending, so each of
 * those tests also proves the timer was cleared.
 */
import assert from "node:assert/strict";
import { withTimeout } from "../../src/shared/with_timeout.ts";
import { sleep } from "../_helpers/wait.ts";

const LONG_MS = 60_000;

Deno.test("a promise that settles in time gives its value; the fallback is not called and the timer is cleared", async () => {
  let fallbacks = 0;
  const value = await withTimeout(Promise.resolve("answer"), LONG_MS, () => {
    fallbacks++;
    return "fallback";
  });
  assert.equal(value, "answer");
  const later = await withTimeout(sleep(5).then(() => 42), LONG_MS, () => -1);
  assert.equal(later, 42);
  assert.equal(fallbacks, 0);
});

Deno.test("a promise that does not settle in time gives the fallback, about when the timer fires", async () => {
  let fallbacks = 0;
  const started = performance.now();
  const value = await withTimeout(new Promise<string>(() => {}), 30, () => {
    fallbacks++;
    return "fallback";
  });
  assert.equal(value, "fallback");
  assert.equal(fallbacks, 1);
  assert.ok(performance.now() - started >= 25, "not before the timer");
});

Deno.test("a rejection passes through unchanged, and the timer is cleared", async () => {
  const reason = new Error("servfail");
  await assert.rejects(withTimeout(Promise.reject(reason), LONG_MS, () => "fallback"), (err) => err === reason);
  await assert.rejects(
    withTimeout(sleep(5).then(() => Promise.reject(reason)), LONG_MS, () => "fallback"),
    (err) => err === reason,
  );
});

Deno.test("a fallback that throws rejects the result", async () => {
  const reason = new Error("timed out");
  await assert.rejects(
    withTimeout(new Promise<string>(() => {}), 1, () => {
      throw reason;
    }),
    (err) => err === reason,
  );
});

Deno.test("once timed out, the promise settling later changes nothing (a late rejection is not unhandled)", async () => {
  const late = sleep(40).then(() => Promise.reject(new Error("too late")));
  assert.equal(await withTimeout(late, 5, () => "fallback"), "fallback");
  // Let the late rejection happen inside this test: it must not surface as unhandled.
  await sleep(60);
  const resolvedLate = sleep(40).then(() => "too late");
  assert.equal(await withTimeout(resolvedLate, 5, () => "fallback"), "fallback");
  await resolvedLate;
});
