/**
 * Scopes of API keys, and the one table of what each operation of `/api`
 * needs. The routes take their documented security from it (`securityOf`),
 * one middleware enforces it for every request (`requireScope`), and
 * `openapi.yaml` and docs/api.md print it (tests keep both equal to it): so the
 * three cannot disagree.
 *
 * A key made without `scopes` has every scope, now and later; a session has
 * every scope. Managing API keys needs a session or a key with every scope
 * and no inbox restriction (`keys`): a restricted key cannot make itself a
 * broader one.
 */
import { createMiddleware } from "hono/factory";
import { matchedRoutes, routePath } from "hono/route";
import type { Context } from "hono";
import { ApiError } from "../errors.ts";
import type { AppEnv, Principal } from "../http/env.ts";

/** Every scope a key may hold, in the order they are documented. */
export const SCOPES = ["inboxes:read", "inboxes:write", "webhooks:read", "webhooks:write", "events:read"] as const;
export type Scope = (typeof SCOPES)[number];

/** What an operation needs: a scope; `keys` (a session or an unrestricted key); or `any` credential. */
export type Need = Scope | "keys" | "any";

/** What each authenticated operation of `/api` needs, by `METHOD /path` as `openapi.yaml` writes it. */
export const OPERATION_NEEDS = {
  "GET /api/me": "any",
  "POST /api/api-keys": "keys",
  "GET /api/api-keys": "keys",
  "DELETE /api/api-keys/{id}": "keys",
  "GET /api/user-webhooks": "webhooks:read",
  "POST /api/user-webhooks": "webhooks:write",
  "GET /api/user-webhooks/{id}": "webhooks:read",
  "PATCH /api/user-webhooks/{id}": "webhooks:write",
  "DELETE /api/user-webhooks/{id}": "webhooks:write",
  "POST /api/user-webhooks/{id}/rotate-secret": "webhooks:write",
  "POST /api/user-webhooks/{id}/test": "webhooks:write",
  "GET /api/user-webhooks/{id}/deliveries": "webhooks:read",
  "POST /api/user-webhooks/{id}/deliveries/{deliveryId}/redeliver": "webhooks:write",
  "POST /api/user-webhooks/{id}/recover": "webhooks:write",
  "POST /api/inboxes": "inboxes:write",
  "GET /api/inboxes": "inboxes:read",
  "GET /api/inboxes/{id}": "inboxes:read",
  "DELETE /api/inboxes/{id}": "inboxes:write",
  "GET /api/inboxes/{id}/messages": "inboxes:read",
  "GET /api/inboxes/{id}/messages/wait": "inboxes:read",
  "GET /api/inboxes/{id}/messages/{messageId}": "inboxes:read",
  "DELETE /api/inboxes/{id}/messages/{messageId}": "inboxes:write",
  "GET /api/inboxes/{id}/messages/{messageId}/raw": "inboxes:read",
  "GET /api/inboxes/{id}/messages/{messageId}/attachments/{attachmentId}": "inboxes:read",
  "GET /api/events": "events:read",
  "GET /api/events/stream": "events:read",
} as const satisfies Record<string, Need>;

export type Operation = keyof typeof OPERATION_NEEDS;

/** The OpenAPI security of an operation: a key with its scope (none for `any`/`keys`), or the session cookie. */
export function securityOf(operation: Operation): Array<Record<string, string[]>> {
  const need: Need = OPERATION_NEEDS[operation];
  return [{ apiKey: need === "any" || need === "keys" ? [] : [need] }, { sessionCookie: [] }];
}

/** Whether a key is unrestricted: every scope, every inbox. */
export function isUnrestricted(principal: Pick<Principal, "scopes" | "inboxIds">): boolean {
  return principal.inboxIds === null && SCOPES.every((s) => principal.scopes.includes(s));
}

/** 403 INSUFFICIENT_SCOPE, naming what is missing. */
export function insufficientScope(need: Exclude<Need, "any">): ApiError {
  const error = need === "keys"
    ? "Managing API keys needs a session or a key with every scope and no inbox restriction"
    : `This key lacks the scope ${need}`;
  return new ApiError(403, "INSUFFICIENT_SCOPE", error);
}

/** Whether a route of a method (not only middleware of every method) matched the request. */
function matchedOperation(c: Context<AppEnv>): boolean {
  return matchedRoutes(c).some((route) => route.method !== "ALL");
}

/** Route patterns as documented, by pattern: a finite set (the registered routes), rewritten once each. */
const DOCUMENTED = new Map<string, string>();

/** `/api/inboxes/:id` as `openapi.yaml` writes it: `/api/inboxes/{id}`. */
function documented(path: string): string {
  let out = DOCUMENTED.get(path);
  if (out === undefined) DOCUMENTED.set(path, out = path.replace(/:([A-Za-z0-9_]+)/g, "{$1}"));
  return out;
}

/**
 * Refuses a request made with a key that lacks what its operation needs
 * (`OPERATION_NEEDS`), with 403 INSUFFICIENT_SCOPE. Runs after
 * authentication; a session passes. A request that matched no operation goes
 * on (to its 404 or 405).
 */
export function requireScope() {
  return createMiddleware<AppEnv>(async (c, next) => {
    const principal = c.get("principal");
    if (principal.apiKeyId === undefined) return await next();
    // The handler is the last route matched; the middleware of `/api/*` comes before it.
    // HEAD is answered by the GET handler, and needs what GET needs.
    const method = c.req.method === "HEAD" ? "GET" : c.req.method;
    const operation = `${method} ${documented(routePath(c, -1))}`;
    const need: Need | undefined = OPERATION_NEEDS[operation as Operation];
    // No operation matched: the request goes on to its 404. One that matched but is missing from the table is
    // refused: a new route is closed to keys until the table says what it needs.
    if (need === undefined) {
      if (matchedOperation(c)) throw new ApiError(403, "INSUFFICIENT_SCOPE", `${operation} is not open to API keys`);
      return await next();
    }
    if (need === "any") return await next();
    if (need === "keys" ? !isUnrestricted(principal) : !principal.scopes.includes(need)) {
      throw insufficientScope(need);
    }
    await next();
  });
}
