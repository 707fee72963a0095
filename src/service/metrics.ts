/**
 * Prometheus metrics through prom-client, one registry per app instance so
 * tests can run several instances in one process.
 */
import client from "prom-client";

/** The registry and the metrics every part of the service records into. */
export interface Metrics {
  registry: client.Registry;
  httpRequests: client.Counter<"method" | "route" | "status">;
  httpDuration: client.Histogram<"method" | "route">;
}

/** Creates a fresh registry with the HTTP metrics. */
export function createMetrics(): Metrics {
  const registry = new client.Registry();
  return {
    registry,
    httpRequests: new client.Counter({
      name: "http_requests_total",
      help: "HTTP requests answered, by method, route pattern and status.",
      labelNames: ["method", "route", "status"] as const,
      registers: [registry],
    }),
    httpDuration: new client.Histogram({
      name: "http_request_duration_seconds",
      help: "Time to answer an HTTP request.",
      labelNames: ["method", "route"] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
  };
}
