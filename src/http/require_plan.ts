/** The plan check: 403 PLAN_REQUIRED for a caller whose plan does not include a feature. */
import { createMiddleware } from "hono/factory";
import { ApiError } from "../errors.ts";
import type { AppEnv } from "./env.ts";
import type { Plan } from "../accounts/schemas.ts";

/** 403 PLAN_REQUIRED with `message` unless the caller's plan is one of `plans`. */
export function requirePlan(plans: readonly Plan[], message: string) {
  return createMiddleware<AppEnv>(async (c, next) => {
    if (!plans.includes(c.get("principal").plan)) throw new ApiError(403, "PLAN_REQUIRED", message);
    await next();
  });
}
