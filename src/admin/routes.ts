/**
 * The operator interface: create accounts and set plans. It exists only when
 * ADMIN_TOKEN is configured; otherwise every /admin path is 404, so a scan
 * learns nothing.
 */
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { createMiddleware } from "hono/factory";
import type { Sql } from "../db/client.ts";
import type { Config } from "../config.ts";
import type { Clock } from "../shared/clock.ts";
import type { AppEnv } from "../http/env.ts";
import { createRouter } from "../http/router.ts";
import { bodyGuards } from "../http/guards.ts";
import { errorResponses, IdParamSchema, jsonBody, jsonResponse } from "../http/schemas.ts";
import { ApiError } from "../errors.ts";
import { requireBearer } from "../http/bearer.ts";
import { AccountSchema, toAccountJson } from "../accounts/schemas.ts";
import { createAccount, findAccountByEmail, setPlan } from "../accounts/service.ts";
import {
  AdminAccountCreateRequestSchema,
  AdminAccountListSchema,
  AdminAccountQuerySchema,
  AdminAccountUpdateRequestSchema,
} from "./schemas.ts";

const security = [{ adminToken: [] }];

const findAccountsRoute = createRoute({
  method: "get",
  path: "/admin/accounts",
  request: { query: AdminAccountQuerySchema },
  // Every /admin method runs the body guards: a GET with a body that is not JSON is 415 too.
  responses: {
    200: jsonResponse("The accounts found (at most one)", AdminAccountListSchema),
    ...errorResponses(400, 401, 404, 413, 415),
  },
  security,
});

const createAccountRoute = createRoute({
  method: "post",
  path: "/admin/accounts",
  request: { body: jsonBody(AdminAccountCreateRequestSchema) },
  responses: { 201: jsonResponse("The new account", AccountSchema), ...errorResponses(400, 401, 404, 413, 415) },
  security,
});

const updateAccountRoute = createRoute({
  method: "patch",
  path: "/admin/accounts/{id}",
  request: { params: IdParamSchema, body: jsonBody(AdminAccountUpdateRequestSchema) },
  responses: { 200: jsonResponse("The updated account", AccountSchema), ...errorResponses(400, 401, 404, 413, 415) },
  security,
});

/** 404 without ADMIN_TOKEN; 401 unless the bearer is the token. */
function adminGuard(token: string | undefined) {
  const bearer = requireBearer(token, "admin", "ADMIN_TOKEN");
  return createMiddleware<AppEnv>(async (c, next) => {
    if (!token) throw new ApiError(404, "NOT_FOUND", "Not found");
    await bearer(c, next);
  });
}

/** The /admin routes. */
export function adminRoutes(
  deps: { sql: Sql; clock: Clock; config: Pick<Config, "adminToken" | "maxBodyBytes"> },
): OpenAPIHono<AppEnv> {
  const app = createRouter();
  app.use("/admin/*", adminGuard(deps.config.adminToken), ...bodyGuards(deps.config.maxBodyBytes));
  return app.openapi(findAccountsRoute, async (c) => {
    const account = await findAccountByEmail(deps.sql, c.req.valid("query").email);
    return c.json({ data: account ? [toAccountJson(account)] : [] }, 200);
  }).openapi(createAccountRoute, async (c) => {
    const account = await createAccount(deps.sql, deps.clock, c.req.valid("json"));
    return c.json(toAccountJson(account), 201);
  }).openapi(updateAccountRoute, async (c) => {
    const account = await setPlan(deps.sql, c.req.valid("param").id, c.req.valid("json").plan);
    return c.json(toAccountJson(account), 200);
  });
}
