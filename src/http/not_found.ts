/** The answer to a request that no route matched. */
import type { Context } from "hono";
import type { AppEnv } from "./env.ts";
import { ApiError } from "../errors.ts";

/** 404 NOT_FOUND with the error body; marks the request `unmatched` for the access log. */
export function notFound(c: Context<AppEnv>): Response {
  c.set("unmatched", true);
  return c.json(new ApiError(404, "NOT_FOUND", "Not found").toBody(), 404);
}
