/** HTTP layer of the test endpoint (a signed `test` event, nothing recorded), the delivery log and redelivery. */
import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { securityOf } from "../auth/scopes.ts";
import type { Sql } from "../db/client.ts";
import type { Clock } from "../shared/clock.ts";
import type { AppEnv } from "../http/env.ts";
import { createRouter } from "../http/router.ts";
import { NoStoreHeaders, NoStoreHeaderSchema } from "../http/security_headers.ts";
import {
  errorResponses,
  IdParamSchema,
  jsonBody,
  jsonResponse,
  PageQuerySchema,
  PathIdSchema,
} from "../http/schemas.ts";
import { getWebhook } from "../webhooks/service.ts";
import { requireWebhookPlan } from "../webhooks/plan.ts";
import type { DispatcherDeps } from "./dispatcher.ts";
import type { Outbox } from "./outbox.ts";
import {
  DeliveryListSchema,
  DeliverySchema,
  RecoverDryRunSchema,
  RecoverQueuedSchema,
  RecoverRequestSchema,
  toDeliveryJson,
  WebhookTestResultSchema,
} from "./schemas.ts";
import { listDeliveries, recover, redeliver, sendTestEvent } from "./service.ts";
import { bodyGuards } from "../http/guards.ts";
import { rateLimit } from "../rate_limit/middleware.ts";
import { rateLimitedResponse, RateLimitHeaders } from "../rate_limit/schemas.ts";
import type { Config } from "../config.ts";
import { DELIVERY_RATE_POLICIES } from "./rate_limits.ts";

const testRoute = createRoute({
  method: "post",
  path: "/api/user-webhooks/{id}/test",
  request: { params: IdParamSchema },
  responses: {
    200: { ...jsonResponse("Outcome of the test delivery", WebhookTestResultSchema), headers: RateLimitHeaders },
    ...errorResponses(401, 403, 404),
    ...rateLimitedResponse(),
  },
  security: securityOf("POST /api/user-webhooks/{id}/test"),
});

const listRoute = createRoute({
  method: "get",
  path: "/api/user-webhooks/{id}/deliveries",
  request: { params: IdParamSchema, query: PageQuerySchema },
  responses: {
    200: { ...jsonResponse("A page of deliveries", DeliveryListSchema), headers: NoStoreHeaders },
    ...errorResponses(400, 401, 403, 404),
  },
  security: securityOf("GET /api/user-webhooks/{id}/deliveries"),
});

const redeliverRoute = createRoute({
  method: "post",
  path: "/api/user-webhooks/{id}/deliveries/{deliveryId}/redeliver",
  request: { params: z.object({ id: PathIdSchema, deliveryId: PathIdSchema }) },
  responses: {
    202: {
      ...jsonResponse("The new pending attempt", DeliverySchema),
      headers: RateLimitHeaders.extend({ "Cache-Control": NoStoreHeaderSchema }),
    },
    ...errorResponses(400, 401, 403, 404),
    ...rateLimitedResponse(),
  },
  security: securityOf("POST /api/user-webhooks/{id}/deliveries/{deliveryId}/redeliver"),
});

const recoverHeaders = RateLimitHeaders.extend({ "Cache-Control": NoStoreHeaderSchema });

const recoverRoute = createRoute({
  method: "post",
  path: "/api/user-webhooks/{id}/recover",
  request: { params: IdParamSchema, body: jsonBody(RecoverRequestSchema) },
  responses: {
    200: { ...jsonResponse("A dry run: what a recover would queue", RecoverDryRunSchema), headers: recoverHeaders },
    202: { ...jsonResponse("The attempts queued", RecoverQueuedSchema), headers: recoverHeaders },
    ...errorResponses(400, 401, 403, 404, 413, 415),
    ...rateLimitedResponse(),
  },
  security: securityOf("POST /api/user-webhooks/{id}/recover"),
});

/** What the delivery routes need. */
export interface DeliveryRouteDeps {
  sql: Sql;
  clock: Clock;
  outbox: Outbox;
  config: Pick<Config, "webhookTestsPerMinute" | "redeliveriesPerMinute" | "maxBodyBytes">;
  /** Signs and sends the test event as a real delivery would be. */
  dispatcher: DispatcherDeps;
}

/** The delivery routes, with their own plan check; `/api` authentication is applied by the app. */
export function deliveryRoutes(deps: DeliveryRouteDeps): OpenAPIHono<AppEnv> {
  const app = createRouter();
  const plan = requireWebhookPlan();
  // Order of checks: 401 (app) -> 403 plan -> 429 per-minute limit -> 404 in the handler.
  app.on(
    "POST",
    "/api/user-webhooks/:id/test",
    plan,
    rateLimit(deps, DELIVERY_RATE_POLICIES.test, deps.config.webhookTestsPerMinute),
  );
  app.on("GET", "/api/user-webhooks/:id/deliveries", plan);
  app.on(
    "POST",
    "/api/user-webhooks/:id/deliveries/:deliveryId/redeliver",
    plan,
    rateLimit(deps, DELIVERY_RATE_POLICIES.redeliver, deps.config.redeliveriesPerMinute),
  );
  // One call of the redelivery limit, whatever it queues.
  app.on(
    "POST",
    "/api/user-webhooks/:id/recover",
    plan,
    rateLimit(deps, DELIVERY_RATE_POLICIES.redeliver, deps.config.redeliveriesPerMinute),
    ...bodyGuards(deps.config.maxBodyBytes),
  );
  return app.openapi(testRoute, async (c) => {
    const webhook = await getWebhook(deps, c.get("principal").accountId, c.req.valid("param").id);
    return c.json(await sendTestEvent(deps.dispatcher, webhook), 200);
  }).openapi(listRoute, async (c) => {
    const webhook = await getWebhook(deps, c.get("principal").accountId, c.req.valid("param").id);
    const page = await listDeliveries(deps.sql, webhook.id, c.req.valid("query"));
    return c.json({ data: page.data.map(toDeliveryJson), nextCursor: page.nextCursor }, 200);
  }).openapi(redeliverRoute, async (c) => {
    const { id, deliveryId } = c.req.valid("param");
    const webhook = await getWebhook(deps, c.get("principal").accountId, id);
    return c.json(toDeliveryJson(await redeliver(deps, webhook, deliveryId)), 202);
  }).openapi(recoverRoute, async (c) => {
    const webhook = await getWebhook(deps, c.get("principal").accountId, c.req.valid("param").id);
    const done = await recover(deps, webhook, c.req.valid("json"));
    return done.dryRun ? c.json({ wouldQueue: done.wouldQueue }, 200) : c.json({ queued: done.queued }, 202);
  });
}
