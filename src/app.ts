/**
 * createApp(deps): the whole HTTP surface as one Hono app. Pure of process
 * concerns (no listening, no env), so tests run any number of instances.
 */
import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppDeps } from "./deps.ts";
import type { AppEnv } from "./http/env.ts";
import { ApiError, handleError } from "./errors.ts";
import { requestId } from "./http/request_id.ts";
import { accessLog } from "./http/access_log.ts";
import { validationHook } from "./http/validation.ts";
import { authenticate } from "./auth/middleware.ts";
import { authRoutes } from "./auth/routes.ts";
import { apiKeyRoutes } from "./api_keys/routes.ts";
import { adminRoutes } from "./admin/routes.ts";
import { webhookRoutes } from "./webhooks/routes.ts";
import { deliveryRoutes } from "./deliveries/routes.ts";
import { inboxRoutes } from "./inboxes/routes.ts";
import { serviceRoutes } from "./service/routes.ts";

/** Paths under /api that do not need a credential. */
const PUBLIC_API = new Set(["/api/auth/register", "/api/auth/login", "/api/auth/logout"]);

/** Builds the app. */
export function createApp(deps: AppDeps): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook() });
  app.use("*", requestId(), accessLog(deps.metrics));

  const auth = authenticate(deps);
  app.use("/api/*", async (c, next) => {
    if (PUBLIC_API.has(c.req.path)) return await next();
    return await auth(c, next);
  });

  app.route("/", serviceRoutes(deps));
  app.route("/", authRoutes(deps));
  app.route("/", apiKeyRoutes(deps));
  app.route("/", webhookRoutes(deps));
  app.route("/", deliveryRoutes(deps));
  app.route("/", inboxRoutes(deps));
  app.route("/", adminRoutes(deps));

  app.notFound((c) => c.json(new ApiError(404, "NOT_FOUND", "Not found").toBody(), 404));
  app.onError(handleError);
  return app;
}
