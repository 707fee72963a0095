/**
 * Refuses request bodies that are not JSON with 415. Together with the
 * SameSite=Lax session cookie this keeps cookie-authenticated endpoints out of
 * reach of cross-site form posts, which can only send form and text types.
 */
import { createMiddleware } from "hono/factory";
import { ApiError } from "../errors.ts";

const JSON_TYPE = /^application\/(?:[a-z0-9.+-]+\+)?json\s*(?:;|$)/i;

/** Whether the request carries a body of at least one byte. */
async function hasBody(req: Request): Promise<boolean> {
  const length = req.headers.get("content-length");
  if (length !== null) return length.trim() !== "0";
  if (req.headers.has("transfer-encoding")) return true;
  if (req.body === null) return false;
  // Neither header: over HTTP/1.1 there is no body (`curl -X DELETE`), but
  // HTTP/2 may stream one without a length. Deno exposes a stream either
  // way, so look at it: an empty body ends at once. A clone, so that the
  // body stays readable by whatever comes next.
  const reader = req.clone().body!.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return false;
      if (value.length > 0) return true;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

/** 415 for a request that carries a body of any type but JSON. */
export function jsonOnly() {
  return createMiddleware(async (c, next) => {
    const method = c.req.method;
    if (
      method !== "GET" && method !== "HEAD" && method !== "OPTIONS" &&
      !JSON_TYPE.test(c.req.header("content-type") ?? "") && await hasBody(c.req.raw)
    ) {
      throw new ApiError(415, "UNSUPPORTED_MEDIA_TYPE", "Request body must be JSON (Content-Type: application/json)");
    }
    await next();
  });
}
