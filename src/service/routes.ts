/** Service endpoints: `/` (a redirect), health, readiness, the OpenAPI document, the reference page, metrics. */
import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { Scalar } from "@scalar/hono-api-reference";
import type { Sql } from "../db/client.ts";
import type { Config } from "../config.ts";
import type { AppEnv } from "../http/env.ts";
import { createRouter } from "../http/router.ts";
import { databaseAnswers } from "../db/outage.ts";
import type { Metrics } from "./metrics.ts";
import { jsonResponse } from "../http/schemas.ts";
import { requireBearer } from "../http/bearer.ts";
import { DOCS_NONCE, docsPolicy } from "../http/security_headers.ts";
import { onFirstUse } from "../shared/on_first_use.ts";

/**
 * Read and parsed on the first request for it, not at start: parsing the
 * 117 kB openapi.yaml left 32 MiB more RSS on every start (yaml's parser
 * and the garbage it makes), for a document few instances are ever asked.
 */
const document = onFirstUse(() => import("./openapi_document.ts"));

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

// Served by the service itself so /docs works with no internet access; vendored
// (vendor/scalar/README.md) rather than installed with the npm package's build tree.
const SCALAR_BUNDLE_URL = new URL("../../vendor/scalar/standalone.js", import.meta.url);
let scalarBundle: Uint8Array | undefined;

/**
 * Put before the bundle: the zod inside it probes whether it may compile
 * parsers with `Function("")`, which the page's CSP (no 'unsafe-eval')
 * refuses and reports as a violation. Jitless, it never probes, and parses
 * the same.
 */
const SCALAR_PRELUDE = "globalThis.__zod_globalConfig = { ...globalThis.__zod_globalConfig, jitless: true };\n";

async function readScalarBundle(): Promise<Uint8Array> {
  const bundle = await Deno.readFile(SCALAR_BUNDLE_URL);
  const prelude = new TextEncoder().encode(SCALAR_PRELUDE);
  const out = new Uint8Array(prelude.length + bundle.length);
  out.set(prelude);
  out.set(bundle, prelude.length);
  return out;
}

/** Where `GET /` sends a visitor: the web UI (which sends a visitor without a session on to its sign-in page). */
export const HOME_PATH = "/ui";

/** The service routes. */
export function serviceRoutes(
  deps: { sql: Sql; metrics: Metrics; config: Pick<Config, "metricsToken"> },
): OpenAPIHono<AppEnv> {
  const app = createRouter();
  // 302: a visitor (or a bookmark) is sent on each time, so the home page can move again.
  app.get("/", (c) => c.redirect(HOME_PATH, 302));
  app.get("/openapi.yaml", async (c) => {
    return c.body((await document()).openApiYaml, 200, { "Content-Type": "application/yaml; charset=utf-8" });
  });
  app.get("/openapi.json", async (c) => c.json((await document()).openApiDocument));
  app.get("/docs/scalar.js", async (c) => {
    scalarBundle ??= await readScalarBundle();
    return c.body(scalarBundle as Uint8Array<ArrayBuffer>, 200, {
      "Content-Type": "text/javascript; charset=utf-8",
      "Cache-Control": "public, max-age=86400",
    });
  });
  // Everything the page runs comes from this origin (see docsPolicy): the bundle above, the
  // document, its start-up script under the request's nonce, and no web fonts from Scalar's CDN.
  app.get(
    "/docs",
    docsPolicy(),
    Scalar<AppEnv>((c) => ({
      url: "/openapi.json",
      cdn: "/docs/scalar.js",
      pageTitle: "Inbox Service API",
      nonce: c.get(DOCS_NONCE),
      withDefaultFonts: false,
    })),
  );
  // With METRICS_TOKEN only the scraper reads them (Prometheus `authorization: { credentials: ... }`).
  app.get("/metrics", requireBearer(deps.config.metricsToken, "metrics", "METRICS_TOKEN"), async (c) => {
    return c.body(await deps.metrics.registry.metrics(), 200, { "Content-Type": deps.metrics.registry.contentType });
  });
  return app.openapi(health, (c) => c.json({ status: "ok" }, 200))
    .openapi(ready, async (c) => {
      return await databaseAnswers(deps.sql) ? c.json({ status: "ok" }, 200) : c.json({ status: "unavailable" }, 503);
    });
}
