/** Gives every request an id, echoed in `X-Request-ID` and carried by every log line of the request. */
import { createMiddleware } from "hono/factory";
import { withContext } from "@logtape/logtape";
import type { AppEnv } from "./env.ts";

const SAFE_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** Accepts a caller's well-formed `X-Request-ID`, else makes one. */
export function requestId() {
  return createMiddleware<AppEnv>(async (c, next) => {
    const given = c.req.header("x-request-id");
    const id = given && SAFE_ID.test(given) ? given : crypto.randomUUID();
    c.set("requestId", id);
    c.header("X-Request-ID", id);
    await withContext({ requestId: id }, next);
  });
}
