/**
 * Authentication of `/api`. A bearer API key wins over a cookie; a request
 * that presents a bad bearer is refused rather than silently falling back to
 * the cookie. Every refusal is the same 401 `Unauthorized` with its cause in
 * `hint` (src/auth/hints.ts).
 */
import { createMiddleware } from "hono/factory";
import { unauthorized } from "../errors.ts";
import type { Sql } from "../db/client.ts";
import type { Clock } from "../shared/clock.ts";
import type { AppEnv } from "../http/env.ts";
import type { AuthCache } from "../api_keys/auth_cache.ts";
import { authenticateApiKey, type KeyCheck } from "../api_keys/service.ts";
import { bearerToken } from "../http/bearer.ts";
import { hasSessionCookie, readSessionCookie } from "./cookie.ts";
import { type Scope, SCOPES } from "./scopes.ts";
import { resolveSession } from "./service.ts";
import { expiredKeyHint, UNAUTHORIZED_HINTS } from "./hints.ts";

/** The hint of a refused key. */
function keyRefusal(check: Exclude<KeyCheck, { ok: true }>): string {
  switch (check.reason) {
    case "malformed":
      return UNAUTHORIZED_HINTS.malformedKey;
    case "unknown":
      return UNAUTHORIZED_HINTS.unknownKey;
    case "expired":
      return expiredKeyHint(check.expiresAt);
  }
}

/** Resolves the caller from a bearer API key or the session cookie; 401 otherwise. */
export function authenticate(deps: { sql: Sql; clock: Clock; authCache: AuthCache }) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const header = c.req.header("authorization");
    if (header !== undefined) {
      const token = bearerToken(header);
      if (token === undefined) throw unauthorized(UNAUTHORIZED_HINTS.notBearer);
      const check = await authenticateApiKey(deps.sql, deps.clock, deps.authCache, token);
      if (!check.ok) throw unauthorized(keyRefusal(check));
      const { owner } = check;
      c.set("principal", {
        accountId: owner.accountId,
        email: owner.email,
        plan: owner.plan,
        apiKeyId: owner.keyId,
        credential: { id: owner.keyId, expiresAt: owner.expiresAt },
        scopes: (owner.scopes ?? SCOPES) as readonly Scope[],
        inboxIds: owner.inboxIds,
      });
      return await next();
    }
    if (!hasSessionCookie(c)) throw unauthorized(UNAUTHORIZED_HINTS.noCredential);
    const session = readSessionCookie(c);
    const resolved = session ? await resolveSession(deps.sql, deps.clock, session) : undefined;
    if (!resolved) throw unauthorized(UNAUTHORIZED_HINTS.session);
    const { account, credential } = resolved;
    c.set("principal", {
      accountId: account.id,
      email: account.email,
      plan: account.plan,
      apiKeyId: undefined,
      credential,
      scopes: SCOPES,
      inboxIds: null,
    });
    await next();
  });
}
