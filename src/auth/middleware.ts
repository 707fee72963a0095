/**
 * Middleware factories for authentication and plan checks. A bearer API key
 * wins over a cookie; a request that presents a bad bearer is refused rather
 * than silently falling back to the cookie.
 */
import { createMiddleware } from "hono/factory";
import { ApiError, unauthorized } from "../errors.ts";
import type { AppDeps } from "../deps.ts";
import type { AppEnv } from "../http/env.ts";
import type { Plan } from "../accounts/schemas.ts";
import { authenticateApiKey } from "../api_keys/service.ts";
import { readSessionCookie } from "./cookie.ts";
import { resolveSession } from "./service.ts";

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/** Resolves the caller from a bearer API key or the session cookie; 401 otherwise. */
export function authenticate(deps: AppDeps) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const header = c.req.header("authorization");
    if (header !== undefined) {
      const token = BEARER.exec(header)?.[1];
      const owner = token ? await authenticateApiKey(deps.sql, deps.clock, deps.authCache, token) : undefined;
      if (!owner) throw unauthorized();
      c.set("principal", { accountId: owner.accountId, email: owner.email, plan: owner.plan, apiKeyId: owner.keyId });
      return await next();
    }
    const session = readSessionCookie(c);
    const account = session ? await resolveSession(deps.sql, deps.clock, session) : undefined;
    if (!account) throw unauthorized();
    c.set("principal", { accountId: account.id, email: account.email, plan: account.plan, apiKeyId: undefined });
    await next();
  });
}

/** 403 PLAN_REQUIRED unless the caller's plan is one of `plans`. */
export function requirePlan(plans: readonly Plan[], message: string) {
  return createMiddleware<AppEnv>(async (c, next) => {
    if (!plans.includes(c.get("principal").plan)) throw new ApiError(403, "PLAN_REQUIRED", message);
    await next();
  });
}
