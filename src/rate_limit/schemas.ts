/** OpenAPI shapes of rate-limited operations: the RateLimit headers, and the 429 that carries them. */
import { z } from "@hono/zod-openapi";
import { errorResponses } from "../http/schemas.ts";

/** Headers of every answer of a rate-limited operation (draft-ietf-httpapi-ratelimit-headers). */
export const RateLimitHeaders = z.object({ "RateLimit": z.string(), "RateLimit-Policy": z.string() });

/** Headers of its 429: the same, plus `Retry-After` in seconds. */
export const RateLimitedHeaders = z.object({
  "RateLimit": z.string(),
  "RateLimit-Policy": z.string(),
  "Retry-After": z.number().int(),
});

/** The `429` entry of a rate-limited route's `responses`. */
export function rateLimitedResponse() {
  return { 429: { ...errorResponses(429)[429], headers: RateLimitedHeaders } };
}
