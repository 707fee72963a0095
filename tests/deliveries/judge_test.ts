/** What counts as a success: any 2xx. Redirects, other statuses and network errors fail with a reason. */
import assert from "node:assert/strict";
import { judge, parseRetryAfter } from "../../src/deliveries/verdict.ts";
import { holdUntil } from "../../src/deliveries/retry_schedule.ts";

const NOW = new Date("2026-01-01T00:00:00Z");

const response = (status: number, retryAfter?: string) =>
  ({ kind: "response", status, body: "", retryAfter, durationMs: 12 }) as const;

Deno.test("2xx succeeds, whatever the body", () => {
  for (const status of [200, 201, 202, 204, 299]) assert.equal(judge(response(status), NOW).ok, true, String(status));
});

Deno.test("3xx fails as a redirect not followed; 4xx and 5xx fail with their status", () => {
  const r = judge(response(301), NOW);
  assert.equal(r.ok, false);
  assert.equal(!r.ok && r.reason, "HTTP 301: redirect not followed");
  assert.equal(!r.ok && r.responseStatus, 301);
  for (const status of [400, 404, 410, 429, 500, 503]) {
    const v = judge(response(status, "30"), NOW);
    assert.equal(v.ok, false);
    assert.equal(!v.ok && v.reason, `HTTP ${status}`);
    assert.equal(!v.ok && v.retryAfterSeconds, 30);
  }
  for (const status of [100, 199]) assert.equal(judge(response(status), NOW).ok, false);
});

Deno.test("no response is a failure with the client's reason and no status", () => {
  const v = judge({ kind: "error", reason: "Timed out after 10000 ms", durationMs: 10_000 }, NOW);
  assert.deepEqual(v, {
    ok: false,
    responseStatus: null,
    reason: "Timed out after 10000 ms",
    durationMs: 10_000,
    retryAfterSeconds: undefined,
    responseBody: null,
  });
});

Deno.test("Retry-After: seconds or an HTTP date", () => {
  assert.equal(parseRetryAfter("120"), 120);
  assert.equal(parseRetryAfter(" 7 "), 7);
  const now = Date.parse("2026-01-01T00:00:00Z");
  assert.equal(parseRetryAfter("Thu, 01 Jan 2026 00:01:00 GMT", now), 60);
  assert.equal(parseRetryAfter("Wed, 31 Dec 2025 00:00:00 GMT", now), 0);
  assert.equal(parseRetryAfter("soon"), undefined);
  assert.equal(parseRetryAfter(undefined), undefined);
});

Deno.test("the answer's body is kept as storable text: NUL and a cut surrogate half become U+FFFD", () => {
  const body = "ok\u0000then \ud83d"; // a NUL, and the first half of an emoji cut at the limit
  const v = judge({ kind: "response", status: 500, body, retryAfter: undefined, durationMs: 3 }, NOW);
  assert.equal(v.responseBody, "ok\uFFFDthen \uFFFD");
  assert.equal(
    judge({ kind: "response", status: 200, body: "fine", retryAfter: undefined, durationMs: 3 }, NOW).responseBody,
    "fine",
  );
});

Deno.test("a Retry-After date is read against the service's clock, not the machine's", () => {
  const v = judge(response(429, "Thu, 01 Jan 2026 00:02:00 GMT"), NOW);
  assert.equal(!v.ok && v.retryAfterSeconds, 120);
});

Deno.test("429 and 503 with Retry-After hold the webhook, at most a day; other answers do not", () => {
  assert.equal(holdUntil(429, 30, NOW)?.toISOString(), "2026-01-01T00:00:30.000Z");
  assert.equal(holdUntil(503, 120, NOW)?.toISOString(), "2026-01-01T00:02:00.000Z");
  assert.equal(holdUntil(503, 3 * 86_400, NOW)?.toISOString(), "2026-01-02T00:00:00.000Z", "capped at 24 h");
  for (const status of [500, 502, 504, 400, 301]) assert.equal(holdUntil(status, 30, NOW), undefined, String(status));
  assert.equal(holdUntil(429, undefined, NOW), undefined, "no Retry-After");
  assert.equal(holdUntil(429, 0, NOW), undefined, "Retry-After 0, or a date past");
  assert.equal(holdUntil(null, 30, NOW), undefined, "no answer");
});
