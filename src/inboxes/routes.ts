/** HTTP layer of inboxes: every plan, free included (their messages: messages/routes.ts). */
import { ApiError } from "../errors.ts";
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { securityOf } from "../auth/scopes.ts";
import type { Config } from "../config.ts";
import type { AppEnv } from "../http/env.ts";
import { createRouter } from "../http/router.ts";
import { bodyGuards } from "../http/guards.ts";
import {
  errorResponses,
  IdParamSchema,
  jsonBody,
  jsonResponse,
  PageQuerySchema,
  SuccessSchema,
} from "../http/schemas.ts";
import { InboxCreateRequestSchema, InboxListSchema, InboxSchema, toInboxJson } from "./schemas.ts";
import { createInbox, deleteInbox, getInbox, type InboxDeps, listInboxes } from "./service.ts";

const createInboxRoute = createRoute({
  method: "post",
  path: "/api/inboxes",
  request: { body: jsonBody(InboxCreateRequestSchema) },
  responses: { 201: jsonResponse("Inbox created", InboxSchema), ...errorResponses(400, 401, 403, 413, 415) },
  security: securityOf("POST /api/inboxes"),
});

const listInboxesRoute = createRoute({
  method: "get",
  path: "/api/inboxes",
  request: { query: PageQuerySchema },
  responses: { 200: jsonResponse("A page of inboxes", InboxListSchema), ...errorResponses(400, 401, 403) },
  security: securityOf("GET /api/inboxes"),
});

const getInboxRoute = createRoute({
  method: "get",
  path: "/api/inboxes/{id}",
  request: { params: IdParamSchema },
  responses: { 200: jsonResponse("The inbox", InboxSchema), ...errorResponses(401, 403, 404) },
  security: securityOf("GET /api/inboxes/{id}"),
});

const deleteInboxRoute = createRoute({
  method: "delete",
  path: "/api/inboxes/{id}",
  request: { params: IdParamSchema },
  responses: { 200: jsonResponse("Inbox deleted", SuccessSchema), ...errorResponses(401, 403, 404) },
  security: securityOf("DELETE /api/inboxes/{id}"),
});

/** The inbox routes; `/api` authentication is applied by the app. */
export function inboxRoutes(
  deps: InboxDeps & { config: Pick<Config, "maxBodyBytes" | "inboxesPerAccount"> },
): OpenAPIHono<AppEnv> {
  const app = createRouter();
  app.on("POST", "/api/inboxes", ...bodyGuards(deps.config.maxBodyBytes));

  return app.openapi(createInboxRoute, async (c) => {
    const principal = c.get("principal");
    // A key limited to some inboxes cannot make itself more: whatever its scopes.
    if (principal.inboxIds !== null) {
      throw new ApiError(403, "INSUFFICIENT_SCOPE", "A key restricted to some inboxes cannot create inboxes");
    }
    const row = await createInbox(deps, principal.accountId, c.req.valid("json"));
    return c.json(toInboxJson(row), 201);
  }).openapi(listInboxesRoute, async (c) => {
    const page = await listInboxes(deps, c.get("principal"), c.req.valid("query"));
    return c.json({ data: page.data.map(toInboxJson), nextCursor: page.nextCursor }, 200);
  }).openapi(getInboxRoute, async (c) => {
    return c.json(toInboxJson(await getInbox(deps, c.get("principal"), c.req.valid("param").id)), 200);
  }).openapi(deleteInboxRoute, async (c) => {
    await deleteInbox(deps, c.get("principal"), c.req.valid("param").id);
    return c.json({ success: true as const }, 200);
  });
}
