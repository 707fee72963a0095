/** Schemas every feature's routes share: the error body, `{ success: true }`, and error responses. */
import { z } from "@hono/zod-openapi";
import { isStorableTime, STORABLE_TIME_MAX, STORABLE_TIME_MIN } from "../shared/storable_time.ts";

export const ErrorDetailSchema = z.object({ path: z.string(), message: z.string() }).openapi("ErrorDetail");

export const ErrorSchema = z.object({
  success: z.literal(false),
  error: z.string(),
  code: z.string(),
  hint: z.string().optional(),
  details: z.array(ErrorDetailSchema).optional(),
}).openapi("Error");

export const SuccessSchema = z.object({ success: z.literal(true) }).openapi("Success");

/**
 * A path id. PostgreSQL text cannot hold NUL, so an id containing one would
 * fail in the query; mapped to U+FFFD (which no id contains) it is simply an
 * unknown id, answered with the resource's own 404.
 */
export const PathIdSchema = z.string().transform((id) => id.replaceAll("\0", "\uFFFD"));

export const IdParamSchema = z.object({ id: PathIdSchema });

const RetryAfter = z.object({ "Retry-After": z.number().int() });

const DESCRIPTIONS: Record<number, string> = {
  400: "Bad request",
  401: "Not authenticated",
  403: "Plan does not include this feature",
  404: "Not found",
  413: "Request body too large",
  415: "Request body is not JSON",
  429: "Too many requests",
  503: "Unavailable",
};

type ErrorResponse = {
  description: string;
  content: { "application/json": { schema: typeof ErrorSchema } };
  headers?: typeof RetryAfter;
};

/** Route `responses` entries for the given error statuses, all with the error body. */
export function errorResponses<S extends number>(...statuses: S[]): Record<S, ErrorResponse> {
  const out = {} as Record<S, ErrorResponse>;
  for (const status of statuses) {
    out[status] = {
      description: DESCRIPTIONS[status] ?? "Error",
      content: { "application/json": { schema: ErrorSchema } },
      ...(status === 429 ? { headers: RetryAfter } : {}),
    };
  }
  return out;
}

/** A JSON request body entry for createRoute. */
export function jsonBody<T extends z.ZodType>(schema: T) {
  return { required: true, content: { "application/json": { schema } } } as const;
}

/** A JSON response entry for createRoute. */
export function jsonResponse<T extends z.ZodType>(description: string, schema: T) {
  return { description, content: { "application/json": { schema } } } as const;
}

/** Security of `/api` operations: a bearer API key or the session cookie. */
export const API_SECURITY: Array<Record<string, string[]>> = [{ apiKey: [] }, { sessionCookie: [] }];

/**
 * A timestamp input (a query parameter or a body field): ISO 8601 with `Z` or
 * an offset, whose instant in UTC falls in the years 0001 to 9999. The bound
 * is what PostgreSQL stores as postgres.js sends it (`Date#toISOString()`):
 * there is no year 0 in PostgreSQL, and from year 10000 on the ISO form gets
 * a sign and six digits (`+010000-...`) that PostgreSQL refuses. The offset
 * counts: `0000-01-01T00:00:00+23:59` and `9999-12-31T23:59:59.999-23:59` pass
 * the format, not the range. The value stays the string the client sent; read
 * it with `new Date(value)`.
 */
export const TimestampInputSchema = z.iso
  .datetime({ offset: true, error: "Must be an ISO 8601 timestamp with Z or an offset (e.g. 2025-01-31T12:34:56Z)" })
  .refine(
    (value) => isStorableTime(Date.parse(value)),
    `Must be between ${STORABLE_TIME_MIN} and ${STORABLE_TIME_MAX} (UTC)`,
  )
  .openapi("TimestampInput");

/** The query of every list endpoint: `limit` (1..100, default 20) and an opaque `cursor`. */
export const PageQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(100).optional(),
  cursor: z.string().optional(),
});
