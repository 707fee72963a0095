/** HTTP layer of user webhooks: list, create (the secret is never returned), get, update, delete. */
import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { securityOf } from "../auth/scopes.ts";
import type { Config } from "../config.ts";
import type { AppEnv } from "../http/env.ts";
import { createRouter } from "../http/router.ts";
import { bodyGuards } from "../http/guards.ts";
import { errorResponses, IdParamSchema, jsonBody, jsonResponse, SuccessSchema } from "../http/schemas.ts";
import { NoStoreHeaders } from "../http/security_headers.ts";
import { requireWebhookPlan } from "./plan.ts";
import { listWebhooks } from "./repo.ts";
import {
  toWebhookCreatedJson,
  toWebhookJson,
  toWebhookSummaryJson,
  WebhookCreatedSchema,
  WebhookCreateRequestSchema,
  WebhookSchema,
  WebhookSecretRotatedSchema,
  WebhookSecretRotateRequestSchema,
  WebhookSummarySchema,
  WebhookUpdateRequestSchema,
} from "./schemas.ts";
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  rotateSecret,
  updateWebhook,
  URL_OR_EVENTS_MESSAGE,
  type WebhookDeps,
} from "./service.ts";

const listRoute = createRoute({
  method: "get",
  path: "/api/user-webhooks",
  responses: {
    200: jsonResponse("The account's webhooks", z.array(WebhookSummarySchema)),
    ...errorResponses(401, 403),
  },
  security: securityOf("GET /api/user-webhooks"),
});

const createWebhookRoute = createRoute({
  method: "post",
  path: "/api/user-webhooks",
  request: { body: jsonBody(WebhookCreateRequestSchema) },
  responses: {
    201: jsonResponse("The new webhook, active", WebhookCreatedSchema),
    ...errorResponses(400, 401, 403, 413, 415, 429),
  },
  security: securityOf("POST /api/user-webhooks"),
});

const getRoute = createRoute({
  method: "get",
  path: "/api/user-webhooks/{id}",
  request: { params: IdParamSchema },
  responses: { 200: jsonResponse("The webhook", WebhookSchema), ...errorResponses(401, 403, 404) },
  security: securityOf("GET /api/user-webhooks/{id}"),
});

const updateRoute = createRoute({
  method: "patch",
  path: "/api/user-webhooks/{id}",
  request: { params: IdParamSchema, body: jsonBody(WebhookUpdateRequestSchema) },
  responses: { 200: jsonResponse("Updated", SuccessSchema), ...errorResponses(400, 401, 403, 404, 413, 415) },
  security: securityOf("PATCH /api/user-webhooks/{id}"),
});

const deleteRoute = createRoute({
  method: "delete",
  path: "/api/user-webhooks/{id}",
  request: { params: IdParamSchema },
  responses: { 200: jsonResponse("Deleted", SuccessSchema), ...errorResponses(401, 403, 404) },
  security: securityOf("DELETE /api/user-webhooks/{id}"),
});

const rotateRoute = createRoute({
  method: "post",
  path: "/api/user-webhooks/{id}/rotate-secret",
  request: { params: IdParamSchema, body: jsonBody(WebhookSecretRotateRequestSchema) },
  responses: {
    // The answer may carry the new secret: never kept by a cache.
    200: { ...jsonResponse("The secret is replaced", WebhookSecretRotatedSchema), headers: NoStoreHeaders },
    ...errorResponses(400, 401, 403, 404, 413, 415),
  },
  security: securityOf("POST /api/user-webhooks/{id}/rotate-secret"),
});

/** The webhook management routes; `/api` authentication is applied by the app. */
export function webhookRoutes(deps: WebhookDeps & { config: Pick<Config, "maxBodyBytes"> }): OpenAPIHono<AppEnv> {
  // The spec's own message when the url or events field is what is wrong.
  const app = createRouter((details, target) =>
    target === "json" && details.some((d) => d.path === "url" || d.path.startsWith("events"))
      ? URL_OR_EVENTS_MESSAGE
      : undefined
  );
  const plan = requireWebhookPlan();
  // Its own paths only: the delivery routes under /api/user-webhooks/{id}/ check the plan themselves.
  app.on(["GET", "POST"], "/api/user-webhooks", plan);
  app.on(["GET", "PATCH", "DELETE"], "/api/user-webhooks/:id", plan);
  app.on("POST", "/api/user-webhooks/:id/rotate-secret", plan);
  app.on(
    ["POST", "PATCH"],
    ["/api/user-webhooks", "/api/user-webhooks/:id", "/api/user-webhooks/:id/rotate-secret"],
    ...bodyGuards(deps.config.maxBodyBytes),
  );

  return app.openapi(listRoute, async (c) => {
    return c.json((await listWebhooks(deps.sql, c.get("principal").accountId)).map(toWebhookSummaryJson), 200);
  }).openapi(createWebhookRoute, async (c) => {
    const row = await createWebhook(deps, c.get("principal").accountId, c.req.valid("json"));
    return c.json(toWebhookCreatedJson(row), 201);
  }).openapi(getRoute, async (c) => {
    return c.json(toWebhookJson(await getWebhook(deps, c.get("principal").accountId, c.req.valid("param").id)), 200);
  }).openapi(updateRoute, async (c) => {
    await updateWebhook(deps, c.get("principal").accountId, c.req.valid("param").id, c.req.valid("json"));
    return c.json({ success: true as const }, 200);
  }).openapi(rotateRoute, async (c) => {
    const { id } = c.req.valid("param");
    return c.json(await rotateSecret(deps, c.get("principal").accountId, id, c.req.valid("json")), 200);
  }).openapi(deleteRoute, async (c) => {
    await deleteWebhook(deps, c.get("principal").accountId, c.req.valid("param").id);
    return c.json({ success: true as const }, 200);
  });
}
