/** The plan check: 403 PLAN_REQUIRED for a caller whose plan does not include a feature. */
import { createMiddleware } from "hono/factory";
import { ApiError } from "../errors.ts";
import type { AppEnv, Principal } from "./env.ts";
import type { Plan } from "../accounts/schemas.ts";
import { planRequiredHint } from "../auth/hints.ts";

/**
 * 403 PLAN_REQUIRED with the spec's `message` as `error`, and a hint naming
 * the plans that have `feature` and how an operator changes the account's.
 */
export function planRequired(
  principal: Pick<Principal, "accountId" | "plan">,
  plans: readonly Plan[],
  message: string,
  feature: string,
): ApiError {
  return new ApiError(403, "PLAN_REQUIRED", message, undefined, undefined, planRequiredHint(feature, plans, principal));
}

/** 403 PLAN_REQUIRED with `message` unless the caller's plan is one of `plans`. */
export function requirePlan(plans: readonly Plan[], message: string, feature: string) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const principal = c.get("principal");
    if (!plans.includes(principal.plan)) throw planRequired(principal, plans, message, feature);
    await next();
  });
}
