/** HTTP layer of API keys: create (the key is shown once), list (prefixes only), revoke. */
import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { securityOf } from "../auth/scopes.ts";
import type { Sql } from "../db/client.ts";
import type { Config } from "../config.ts";
import type { Clock } from "../shared/clock.ts";
import type { AppEnv } from "../http/env.ts";
import { createRouter } from "../http/router.ts";
import { requirePlan } from "../http/require_plan.ts";
import { bodyGuards } from "../http/guards.ts";
import { errorResponses, IdParamSchema, jsonBody, SuccessSchema } from "../http/schemas.ts";
import { rateLimit } from "../rate_limit/middleware.ts";
import {
  ApiKeyCreatedSchema,
  ApiKeyCreateRequestSchema,
  ApiKeySchema,
  toApiKeyCreatedJson,
  toApiKeyJson,
} from "./schemas.ts";
import { API_KEY_PLANS, createApiKey, revokeApiKey } from "./service.ts";
import { listApiKeys } from "./repo.ts";
import type { NotificationHub } from "../notifications/hub.ts";
import { NoStoreHeaderSchema } from "../http/security_headers.ts";

const PLAN_MESSAGE = "API keys not available on your plan";

/** Spec section 8: requests per minute by plan; free has no allowance. */
export const API_KEY_RATE_LIMITS = {
  create: { pro: 10, business: 30 },
  list: { pro: 30, business: 60 },
  delete: { pro: 10, business: 30 },
} as const;

const RateLimitHeaders = z.object({ "RateLimit": z.string(), "RateLimit-Policy": z.string() });
const RateLimitedHeaders = z.object({
  "RateLimit": z.string(),
  "RateLimit-Policy": z.string(),
  "Retry-After": z.number().int(),
});

const errors = (...statuses: (400 | 401 | 403 | 404 | 413 | 415)[]) => ({
  ...errorResponses(...statuses),
  429: { ...errorResponses(429)[429], headers: RateLimitedHeaders },
});

const createKey = createRoute({
  method: "post",
  path: "/api/api-keys",
  request: { body: jsonBody(ApiKeyCreateRequestSchema) },
  responses: {
    201: {
      description: "The new key; `key` is shown only here",
      headers: RateLimitHeaders.extend({ "Cache-Control": NoStoreHeaderSchema }),
      content: { "application/json": { schema: ApiKeyCreatedSchema } },
    },
    ...errors(400, 401, 403, 413, 415),
  },
  security: securityOf("POST /api/api-keys"),
});

const listKeys = createRoute({
  method: "get",
  path: "/api/api-keys",
  responses: {
    200: {
      description: "The account's keys, without the keys themselves",
      headers: RateLimitHeaders,
      content: { "application/json": { schema: z.array(ApiKeySchema) } },
    },
    ...errors(401, 403),
  },
  security: securityOf("GET /api/api-keys"),
});

const deleteKey = createRoute({
  method: "delete",
  path: "/api/api-keys/{id}",
  request: { params: IdParamSchema },
  responses: {
    200: {
      description: "The key is revoked",
      headers: RateLimitHeaders,
      content: { "application/json": { schema: SuccessSchema } },
    },
    ...errors(401, 403, 404),
  },
  security: securityOf("DELETE /api/api-keys/{id}"),
});

/** The API key routes; authentication is applied by the app to all of `/api`. */
export function apiKeyRoutes(
  deps: { sql: Sql; clock: Clock; hub: Pick<NotificationHub, "publishLocal">; config: Pick<Config, "maxBodyBytes"> },
): OpenAPIHono<AppEnv> {
  const app = createRouter();
  const plan = requirePlan(API_KEY_PLANS, PLAN_MESSAGE, "API keys");
  // Order of checks (design): 401 (app) -> 403 plan -> 429 rate -> 415/413 body -> 400 validation.
  app.on(
    "POST",
    "/api/api-keys",
    plan,
    rateLimit(deps, "api-keys-create", API_KEY_RATE_LIMITS.create),
    ...bodyGuards(deps.config.maxBodyBytes),
  );
  app.on("GET", "/api/api-keys", plan, rateLimit(deps, "api-keys-list", API_KEY_RATE_LIMITS.list));
  app.on("DELETE", "/api/api-keys/:id", plan, rateLimit(deps, "api-keys-delete", API_KEY_RATE_LIMITS.delete));

  return app.openapi(createKey, async (c) => {
    const k = await createApiKey(deps.sql, deps.clock, c.get("principal").accountId, c.req.valid("json"));
    return c.json(toApiKeyCreatedJson(k), 201);
  }).openapi(listKeys, async (c) => {
    return c.json((await listApiKeys(deps.sql, c.get("principal").accountId)).map(toApiKeyJson), 200);
  }).openapi(deleteKey, async (c) => {
    await revokeApiKey(deps, c.get("principal").accountId, c.req.valid("param").id);
    return c.json({ success: true as const }, 200);
  });
}
