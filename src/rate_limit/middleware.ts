/**
 * Per-minute request limits per plan (spec section 8). Every request that
 * reaches the limiter counts, whatever its outcome, except refused ones: a
 * client that keeps retrying is not locked out for longer.
 */
import { createMiddleware } from "hono/factory";
import { ApiError } from "../errors.ts";
import type { Sql } from "../db/client.ts";
import type { Clock } from "../shared/clock.ts";
import type { AppEnv } from "../http/env.ts";
import type { Plan } from "../accounts/schemas.ts";
import { checkAndRecord, rateLimitHeaders } from "./limiter.ts";
import { planRequired } from "../http/require_plan.ts";

/** Requests per minute by plan; a plan without an entry has no allowance. */
export type PlanLimits = Partial<Record<Plan, number>>;

/** Limits one operation per account and minute, and sets the RateLimit headers. */
export function rateLimit(deps: { sql: Sql; clock: Clock }, operation: string, limits: PlanLimits) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const { accountId, plan } = c.get("principal");
    const limit = limits[plan];
    if (limit === undefined) {
      const plans = (Object.keys(limits) as Plan[]).filter((p) => limits[p] !== undefined);
      throw planRequired(
        c.get("principal"),
        plans,
        "Your plan has no allowance for this operation",
        "Calls of this operation",
      );
    }
    const policy = { name: operation, limit, windowSeconds: 60 };
    const decision = await deps.sql.begin((tx) =>
      checkAndRecord(tx, `req:${operation}:${accountId}`, policy, deps.clock.now())
    );
    const headers = rateLimitHeaders(decision);
    if (!decision.allowed) {
      throw new ApiError(
        429,
        "RATE_LIMITED",
        `Too many requests: at most ${limit} per minute on your plan`,
        undefined,
        {
          ...headers,
          "Retry-After": String(decision.resetSeconds),
        },
      );
    }
    await next();
    // Set after next(): the handler's response object is the one that goes out.
    for (const [name, value] of Object.entries(headers)) c.res.headers.set(name, value);
  });
}
