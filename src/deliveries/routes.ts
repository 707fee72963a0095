/** HTTP layer of the test endpoint (spec 4.2), the delivery log and redelivery. */
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import type { AppDeps } from "../deps.ts";
import type { AppEnv } from "../http/env.ts";
import { validationHook } from "../http/validation.ts";
import {
  API_SECURITY,
  errorResponses,
  IdParamSchema,
  jsonResponse,
  PageQuerySchema,
  PathIdSchema,
} from "../http/schemas.ts";
import { getWebhook, webhookDeps } from "../webhooks/service.ts";
import { DeliveryListSchema, DeliverySchema, toDeliveryJson, WebhookTestResultSchema } from "./schemas.ts";
import { listDeliveries, redeliver, sendTestEvent } from "./service.ts";

const testRoute = createRoute({
  method: "post",
  path: "/api/user-webhooks/{id}/test",
  request: { params: IdParamSchema },
  responses: {
    200: jsonResponse("Outcome of the test delivery", WebhookTestResultSchema),
    ...errorResponses(401, 403, 404),
  },
  security: API_SECURITY,
});

const listRoute = createRoute({
  method: "get",
  path: "/api/user-webhooks/{id}/deliveries",
  request: { params: IdParamSchema, query: PageQuerySchema },
  responses: { 200: jsonResponse("A page of deliveries", DeliveryListSchema), ...errorResponses(400, 401, 403, 404) },
  security: API_SECURITY,
});

const redeliverRoute = createRoute({
  method: "post",
  path: "/api/user-webhooks/{id}/deliveries/{deliveryId}/redeliver",
  request: { params: z.object({ id: PathIdSchema, deliveryId: PathIdSchema }) },
  responses: { 202: jsonResponse("The new pending attempt", DeliverySchema), ...errorResponses(400, 401, 403, 404) },
  security: API_SECURITY,
});

/** The delivery routes; authentication and the plan check come from the app and the webhook routes. */
export function deliveryRoutes(deps: AppDeps): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook() });
  const w = webhookDeps(deps);
  return app.openapi(testRoute, async (c) => {
    const webhook = await getWebhook(w, c.get("principal").accountId, c.req.valid("param").id);
    return c.json(await sendTestEvent(deps.deliveries.dispatcher, webhook), 200);
  }).openapi(listRoute, async (c) => {
    const webhook = await getWebhook(w, c.get("principal").accountId, c.req.valid("param").id);
    const page = await listDeliveries(deps.sql, webhook.id, c.req.valid("query"));
    return c.json({ data: page.data.map(toDeliveryJson), nextCursor: page.nextCursor }, 200);
  }).openapi(redeliverRoute, async (c) => {
    const { id, deliveryId } = c.req.valid("param");
    const webhook = await getWebhook(w, c.get("principal").accountId, id);
    const row = await redeliver(deps.sql, deps.clock, webhook, deliveryId);
    deps.deliveries.wake();
    return c.json(toDeliveryJson(row), 202);
  });
}
