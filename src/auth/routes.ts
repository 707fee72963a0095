/** HTTP layer of accounts and sessions: register, login, logout, me. */
import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { securityOf } from "./scopes.ts";
import type { Sql } from "../db/client.ts";
import type { Config } from "../config.ts";
import type { Clock } from "../shared/clock.ts";
import type { AppEnv } from "../http/env.ts";
import { createRouter } from "../http/router.ts";
import { bodyGuards } from "../http/guards.ts";
import { errorResponses, jsonBody, jsonResponse, SuccessSchema } from "../http/schemas.ts";
import { AccountSchema, CredentialsSchema, toAccountJson } from "../accounts/schemas.ts";
import { createAccount } from "../accounts/service.ts";
import { findAccountById } from "../accounts/repo.ts";
import { unauthorized } from "../errors.ts";
import { UNAUTHORIZED_HINTS } from "./hints.ts";
import { clearSessionCookie, readSessionCookie, setSessionCookie } from "./cookie.ts";
import { checkCredentials, endSession, startSession } from "./service.ts";
import type { NotificationHub } from "../notifications/hub.ts";
import { loginThrottle, registrationLimit, type ThrottleConfig } from "./throttle.ts";
import { clientAddressReader } from "../http/client_address.ts";
import { NoStoreHeaderSchema } from "../http/security_headers.ts";

/** A response that starts a session: the cookie, which no cache may keep (`no-store` is set on all of /api). */
const SessionHeaders = z.object({ "Set-Cookie": z.string(), "Cache-Control": NoStoreHeaderSchema });

const register = createRoute({
  method: "post",
  path: "/api/auth/register",
  request: { body: jsonBody(CredentialsSchema) },
  responses: {
    201: {
      ...jsonResponse("The new account (free plan); the session cookie is set", AccountSchema),
      headers: SessionHeaders,
    },
    ...errorResponses(400, 413, 415, 429),
  },
  security: [],
});

const login = createRoute({
  method: "post",
  path: "/api/auth/login",
  request: { body: jsonBody(CredentialsSchema) },
  responses: {
    200: { ...jsonResponse("The account; the session cookie is set", AccountSchema), headers: SessionHeaders },
    ...errorResponses(400, 401, 413, 415, 429),
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
  security: securityOf("GET /api/me"),
});

/** Account and session routes. `/api/me` relies on the app's authentication of `/api`. */
export function authRoutes(
  deps: {
    sql: Sql;
    clock: Clock;
    /** Logging out ends the session's open requests at once (auth/revocations.ts). */
    hub: Pick<NotificationHub, "publishLocal">;
    config: Pick<Config, "cookieSecure" | "sessionTtlDays" | "maxBodyBytes"> & ThrottleConfig;
  },
): OpenAPIHono<AppEnv> {
  const app = createRouter();
  const { cookieSecure, sessionTtlDays } = deps.config;
  const throttle = loginThrottle(deps);
  const addressOf = clientAddressReader(deps.config.trustedProxies);
  // Registrations per address count before the body is read (429 -> 415/413 -> 400, as elsewhere);
  // a login's throttle needs the email, so it runs in the handler, before the password is checked.
  app.on("POST", "/api/auth/register", registrationLimit(deps), ...bodyGuards(deps.config.maxBodyBytes));
  app.on("POST", "/api/auth/login", ...bodyGuards(deps.config.maxBodyBytes));

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
    // During a lockout even the right password is refused, unchecked: otherwise guessing goes on.
    const attempt = await throttle.admit(email, addressOf(c));
    const account = await checkCredentials(deps.sql, email, password);
    await throttle.succeeded(attempt);
    setSessionCookie(
      c,
      await startSession(deps.sql, deps.clock, account.id, sessionTtlDays),
      cookieSecure,
      sessionTtlDays,
    );
    return c.json(toAccountJson(account), 200);
  }).openapi(logout, async (c) => {
    const token = readSessionCookie(c);
    if (token) await endSession(deps, token);
    clearSessionCookie(c, cookieSecure);
    return c.json({ success: true as const }, 200);
  }).openapi(me, async (c) => {
    // Read fresh rather than from the principal: a plan change shows at once.
    const account = await findAccountById(deps.sql, c.get("principal").accountId);
    if (!account) throw unauthorized(UNAUTHORIZED_HINTS.accountGone);
    return c.json(toAccountJson(account), 200);
  });
}
