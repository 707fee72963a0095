/**
 * createApp(services): the whole HTTP surface as one Hono app. Pure of process
 * concerns (no listening, no env), so tests run any number of instances.
 * Each feature's routes get the services and use the few they declare.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Services } from "./compose.ts";
import type { AppEnv } from "./http/env.ts";
import { createRouter } from "./http/router.ts";
import { handleError } from "./errors.ts";
import { requestId } from "./http/request_id.ts";
import { accessLog } from "./http/access_log.ts";
import { notFound } from "./http/not_found.ts";
import { securityHeaders } from "./http/security_headers.ts";
import { authenticate } from "./auth/middleware.ts";
import { requireScope } from "./auth/scopes.ts";
import { authRoutes } from "./auth/routes.ts";
import { apiKeyRoutes } from "./api_keys/routes.ts";
import { adminRoutes } from "./admin/routes.ts";
import { webhookRoutes } from "./webhooks/routes.ts";
import { deliveryRoutes } from "./deliveries/routes.ts";
import { messageRoutes } from "./messages/routes.ts";
import { eventRoutes } from "./events/routes.ts";
import { inboxRoutes } from "./inboxes/routes.ts";
import { serviceRoutes } from "./service/routes.ts";
import { mcpRoutes } from "./mcp/http.ts";
import { uiRoutes } from "./ui/routes.ts";

/** The paths whose every response, errors and 404s included, is `Cache-Control: no-store`. */
const NO_STORE_PREFIXES = ["/api", "/admin"];

/** Paths under /api that do not need a credential. */
const PUBLIC_API = new Set(["/api/auth/register", "/api/auth/login", "/api/auth/logout"]);

/** Builds the app. */
export function createApp(services: Services): OpenAPIHono<AppEnv> {
  const app = createRouter();
  // Before authentication, so that its 401s carry the headers too.
  app.use("*", requestId(), accessLog(services.metrics), securityHeaders(NO_STORE_PREFIXES));

  const auth = authenticate(services);
  const scoped = requireScope();
  app.use("/api/*", async (c, next) => {
    if (PUBLIC_API.has(c.req.path)) return await next();
    return await auth(c, async () => void await scoped(c, next));
  });

  app.route("/", serviceRoutes(services));
  app.route("/", authRoutes(services));
  app.route("/", apiKeyRoutes(services));
  app.route("/", webhookRoutes(services));
  app.route("/", deliveryRoutes(services));
  app.route("/", inboxRoutes(services));
  app.route("/", messageRoutes(services));
  app.route("/", eventRoutes(services));
  app.route("/", adminRoutes(services));
  // Not an OpenAPI operation: the tools behind it call the routes above, through this same app.
  app.route("/", mcpRoutes(services, (request, env) => app.fetch(request, env)));
  // HTML pages, not OpenAPI operations either: they read through the routes above, in process, as the reader.
  app.route("/", uiRoutes(services, (request, env) => app.fetch(request, env)));

  app.notFound(notFound);
  app.onError((err, c) => handleError(err, c, services.databaseOutage));
  return app;
}
