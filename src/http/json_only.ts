/**
 * Refuses request bodies that are not JSON with 415. Together with the
 * SameSite=Lax session cookie this keeps cookie-authenticated endpoints out of
 * reach of cross-site form posts, which can only send form and text types.
 */
import { createMiddleware } from "hono/factory";
import { ApiError } from "../errors.ts";

const JSON_TYPE = /^application\/(?:[a-z0-9.+-]+\+)?json\s*(?:;|$)/i;

function hasBody(req: Request): boolean {
  const length = req.headers.get("content-length");
  if (length !== null) return length.trim() !== "0";
  return req.headers.has("transfer-encoding") || req.body !== null;
}

/** 415 for a request that carries a body of any type but JSON. */
export function jsonOnly() {
  return createMiddleware(async (c, next) => {
    const method = c.req.method;
    if (method !== "GET" && method !== "HEAD" && method !== "OPTIONS" && hasBody(c.req.raw)) {
      const type = c.req.header("content-type") ?? "";
      if (!JSON_TYPE.test(type)) {
        throw new ApiError(415, "UNSUPPORTED_MEDIA_TYPE", "Request body must be JSON (Content-Type: application/json)");
      }
    }
    await next();
  });
}
