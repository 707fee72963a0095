/**
 * What a receiver's answer means for the attempt: any 2xx is a success; a
 * redirect (never followed), any other status, a timeout or a network error
 * is a failure with a reason, and a `Retry-After` the receiver sent moves the
 * next retry.
 */
import type { SendOutcome } from "./http_client.ts";

/**
 * A receiver's answer judged: any 2xx is a success, anything else a failure
 * with a reason. `responseBody` is the start of the answer as the delivery log
 * keeps it (storable text); null when there was no answer.
 */
export type Verdict =
  | { ok: true; responseStatus: number; durationMs: number; responseBody: string | null }
  | {
    ok: false;
    responseStatus: number | null;
    reason: string;
    durationMs: number;
    retryAfterSeconds: number | undefined;
    responseBody: string | null;
  };

/**
 * A response body as text PostgreSQL can store: NUL (which a text column
 * refuses) becomes U+FFFD, as does a surrogate half that a cut at a character
 * limit left at the end.
 */
export function storableText(text: string): string {
  return text.replaceAll("\0", "\uFFFD").toWellFormed();
}

/**
 * Judges the outcome of a send, answered at `now` (a `Retry-After` date is
 * read against it). Redirects are failures: they are never followed.
 */
export function judge(outcome: SendOutcome, now: Date): Verdict {
  if (outcome.kind === "error") {
    return {
      ok: false,
      responseStatus: null,
      reason: outcome.reason,
      durationMs: outcome.durationMs,
      retryAfterSeconds: undefined,
      responseBody: null,
    };
  }
  const { status, durationMs } = outcome;
  const responseBody = storableText(outcome.body);
  if (status >= 200 && status < 300) return { ok: true, responseStatus: status, durationMs, responseBody };
  const reason = status >= 300 && status < 400 ? `HTTP ${status}: redirect not followed` : `HTTP ${status}`;
  return {
    ok: false,
    responseStatus: status,
    reason,
    durationMs,
    retryAfterSeconds: parseRetryAfter(outcome.retryAfter, now.getTime()),
    responseBody,
  };
}

/** Reads the `Retry-After` header: delay-seconds or an HTTP date, as seconds from `now` (0 for a date past). */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}
