/** HTTP layer of accounts and sessions: register, login, logout, me. */
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import type { AppDeps } from "../deps.ts";
import type { AppEnv } from "../http/env.ts";
import { validationHook } from "../http/validation.ts";
import { bodyGuards } from "../http/guards.ts";
import { API_SECURITY, errorResponses, jsonBody, jsonResponse, SuccessSchema } from "../http/schemas.ts";
import { AccountSchema, CredentialsSchema, toAccountJson } from "../accounts/schemas.ts";
import { createAccount } from "../accounts/service.ts";
import { findAccountById } from "../accounts/repo.ts";
import { unauthorized } from "../errors.ts";
import { clearSessionCookie, readSessionCookie, setSessionCookie } from "./cookie.ts";
import { checkCredentials, endSession, startSession } from "./service.ts";

const SetCookieHeader = z.object({ "Set-Cookie": z.string() });

const register = createRoute({
  method: "post",
  path: "/api/auth/register",
  request: { body: jsonBody(CredentialsSchema) },
  responses: {
    201: {
      ...jsonResponse("The new account (free plan); the session cookie is set", AccountSchema),
      headers: SetCookieHeader,
    },
    ...errorResponses(400, 413, 415),
  },
  security: [],
});

const login = createRoute({
  method: "post",
  path: "/api/auth/login",
  request: { body: jsonBody(CredentialsSchema) },
  responses: {
    200: { ...jsonResponse("The account; the session cookie is set", AccountSchema), headers: SetCookieHeader },
    ...errorResponses(400, 401, 413, 415),
  },
  security: [],
});

const logout = createRoute({
  method: "post",
  path: "/api/auth/logout",
  responses: { 200: jsonResponse("The session is ended and the cookie cleared", SuccessSchema) },
  security: [],
});

const me = createRoute({
  method: "get",
  path: "/api/me",
  responses: { 200: jsonResponse("The authenticated account", AccountSchema), ...errorResponses(401) },
  security: API_SECURITY,
});

/** Account and session routes. `/api/me` relies on the app's authentication of `/api`. */
export function authRoutes(deps: AppDeps): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook() });
  const { cookieSecure, sessionTtlDays } = deps.config;
  app.on("POST", ["/api/auth/register", "/api/auth/login"], ...bodyGuards(deps));

  return app.openapi(register, async (c) => {
    const { email, password } = c.req.valid("json");
    const account = await createAccount(deps.sql, deps.clock, { email, password, plan: "free" });
    setSessionCookie(
      c,
      await startSession(deps.sql, deps.clock, account.id, sessionTtlDays),
      cookieSecure,
      sessionTtlDays,
    );
    return c.json(toAccountJson(account), 201);
  }).openapi(login, async (c) => {
    const { email, password } = c.req.valid("json");
    const account = await checkCredentials(deps.sql, email, password);
    setSessionCookie(
      c,
      await startSession(deps.sql, deps.clock, account.id, sessionTtlDays),
      cookieSecure,
      sessionTtlDays,
    );
    return c.json(toAccountJson(account), 200);
  }).openapi(logout, async (c) => {
    const token = readSessionCookie(c);
    if (token) await endSession(deps.sql, token);
    clearSessionCookie(c, cookieSecure);
    return c.json({ success: true as const }, 200);
  }).openapi(me, async (c) => {
    // Read fresh rather than from the principal: a plan change shows at once.
    const account = await findAccountById(deps.sql, c.get("principal").accountId);
    if (!account) throw unauthorized();
    return c.json(toAccountJson(account), 200);
  });
}
