/** One log line and one metric sample per request; never headers or bodies. */
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { matchedRoutes } from "hono/route";
import { getLogger } from "@logtape/logtape";
import type { AppEnv } from "./env.ts";
import type { Counter, Histogram } from "prom-client";

/** The HTTP metrics this middleware records into (the app's registry holds them). */
export interface HttpMetrics {
  httpRequests: Counter<"method" | "route" | "status">;
  httpDuration: Histogram<"method" | "route">;
}

const log = getLogger(["inbox", "http"]);

/** The methods of RFC 9110 and RFC 5789; any other name is one label value. */
const STANDARD_METHODS: ReadonlySet<string> = new Set([
  "GET",
  "HEAD",
  "POST",
  "PUT",
  "DELETE",
  "CONNECT",
  "OPTIONS",
  "TRACE",
  "PATCH",
]);

/** The label of a request that no route matched, whatever its path. */
export const UNMATCHED_ROUTE = "unmatched";

/** The `method` label: the method when standard (case-sensitive, as HTTP is), else `OTHER`. */
export function methodLabel(method: string): string {
  return STANDARD_METHODS.has(method) ? method : "OTHER";
}

/**
 * The `route` label: the pattern of the last route registered for this
 * request's method (`/api/inboxes/:id`), never the raw path. Middleware
 * mounted for every method (`app.use`) does not count, so a request that
 * matched only such middleware, or that the not-found handler answered, is
 * `unmatched`.
 */
export function routeLabel(c: Context<AppEnv>): string {
  if (c.get("unmatched")) return UNMATCHED_ROUTE;
  const route = matchedRoutes(c).findLast((r) => r.method !== "ALL");
  return route?.path ?? UNMATCHED_ROUTE;
}

/**
 * Logs and counts each request. Both labels come from finite sets (the
 * standard methods and the registered patterns), so a client inventing
 * methods or paths cannot add series to /metrics.
 */
export function accessLog(metrics: HttpMetrics) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const started = performance.now();
    await next();
    const seconds = (performance.now() - started) / 1000;
    const method = methodLabel(c.req.method);
    const route = routeLabel(c);
    const status = String(c.res.status);
    metrics.httpRequests.inc({ method, route, status });
    metrics.httpDuration.observe({ method, route }, seconds);
    // With info lines off (LOG_LEVEL warning or above, as the bench runs it) the record is not even built.
    if (!log.isEnabledFor("info")) return;
    log.info("{method} {route} {status} {ms}ms", {
      method,
      route,
      status: c.res.status,
      ms: Math.round(seconds * 1000),
    });
  });
}
