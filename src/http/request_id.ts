/** Gives every request an id, echoed in `X-Request-ID` and used in logs. */
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "./env.ts";

const SAFE_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** Accepts a caller's well-formed `X-Request-ID`, else makes one. */
export function requestId() {
  return createMiddleware<AppEnv>(async (c, next) => {
    const given = c.req.header("x-request-id");
    const id = given && SAFE_ID.test(given) ? given : crypto.randomUUID();
    c.set("requestId", id);
    c.header("X-Request-ID", id);
    await next();
  });
}
