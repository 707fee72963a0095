/** One log line and one metric sample per request; never headers or bodies. */
import { createMiddleware } from "hono/factory";
import { getLogger } from "@logtape/logtape";
import type { AppEnv } from "./env.ts";
import type { Metrics } from "../service/metrics.ts";

const log = getLogger(["inbox", "http"]);

/** Logs and counts each request by its route pattern, not its raw path. */
export function accessLog(metrics: Metrics) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const started = performance.now();
    await next();
    const seconds = (performance.now() - started) / 1000;
    // The route pattern keeps label cardinality bounded (ids stay out of it).
    const route = c.req.routePath || "unmatched";
    const status = String(c.res.status);
    metrics.httpRequests.inc({ method: c.req.method, route, status });
    metrics.httpDuration.observe({ method: c.req.method, route }, seconds);
    log.info("{method} {route} {status} {ms}ms", {
      method: c.req.method,
      route,
      status: c.res.status,
      ms: Math.round(seconds * 1000),
      requestId: c.get("requestId"),
    });
  });
}
