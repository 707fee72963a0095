/** Service endpoints: health, readiness, the OpenAPI document, the reference page, metrics. */
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { Scalar } from "@scalar/hono-api-reference";
import type { AppDeps } from "../deps.ts";
import type { AppEnv } from "../http/env.ts";
import { jsonResponse } from "../http/schemas.ts";
import { openApiDocument, openApiYaml } from "./openapi_document.ts";

const HealthSchema = z.object({ status: z.string() }).openapi("Health");

const health = createRoute({
  method: "get",
  path: "/healthz",
  responses: { 200: jsonResponse("The process is running", HealthSchema) },
  security: [],
});

const ready = createRoute({
  method: "get",
  path: "/readyz",
  responses: {
    200: jsonResponse("The database answers", HealthSchema),
    503: jsonResponse("The database does not answer", HealthSchema),
  },
  security: [],
});

// Served by the service itself so /docs works with no internet access.
const SCALAR_BUNDLE_URL = new URL(
  "../../node_modules/@scalar/api-reference/dist/browser/standalone.js",
  import.meta.url,
);
let scalarBundle: Uint8Array | undefined;

const READY_TIMEOUT_MS = 2000;

async function databaseAnswers(deps: AppDeps): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const timeout = new Promise<false>((resolve) => timer = setTimeout(() => resolve(false), READY_TIMEOUT_MS));
    return await Promise.race([deps.sql`SELECT 1`.then(() => true), timeout]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/** The service routes. */
export function serviceRoutes(deps: AppDeps): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>();
  app.get("/openapi.yaml", (c) => c.body(openApiYaml, 200, { "Content-Type": "application/yaml; charset=utf-8" }));
  app.get("/openapi.json", (c) => c.json(openApiDocument));
  app.get("/docs/scalar.js", async (c) => {
    scalarBundle ??= await Deno.readFile(SCALAR_BUNDLE_URL);
    return c.body(scalarBundle as Uint8Array<ArrayBuffer>, 200, {
      "Content-Type": "text/javascript; charset=utf-8",
      "Cache-Control": "public, max-age=86400",
    });
  });
  app.get("/docs", Scalar({ url: "/openapi.json", cdn: "/docs/scalar.js", pageTitle: "Inbox Service API" }));
  app.get("/metrics", async (c) => {
    return c.body(await deps.metrics.registry.metrics(), 200, { "Content-Type": deps.metrics.registry.contentType });
  });
  return app.openapi(health, (c) => c.json({ status: "ok" }, 200))
    .openapi(ready, async (c) => {
      return await databaseAnswers(deps) ? c.json({ status: "ok" }, 200) : c.json({ status: "unavailable" }, 503);
    });
}
