/** Delivery metrics: outcomes, attempt latency, queue depth and the age of the oldest due attempt. */
import client from "prom-client";
import type { Sql } from "../db/client.ts";
import type { Clock } from "../shared/clock.ts";
import { queueStats } from "./repo.ts";

/** The delivery metrics, registered in the app's registry. */
export interface DeliveryMetrics {
  outcomes: client.Counter<"outcome">;
  latency: client.Histogram<"result">;
  /** Where an attempt's time goes, and the claims' (the benchmark's stage table reads them). */
  stages: client.Histogram<"stage">;
  /** Attempts the claims took. */
  claimed: client.Counter;
}

/** Registers the delivery metrics; the gauges read the queue when scraped. */
export function createDeliveryMetrics(registry: client.Registry, sql: Sql, clock: Clock): DeliveryMetrics {
  let stats: Promise<{ pending: number; oldestDueSeconds: number }> | undefined;
  // One query per scrape for both gauges.
  const read = () => stats ??= queueStats(sql, clock.now()).finally(() => setTimeout(() => stats = undefined, 0));
  new client.Gauge({
    name: "delivery_queue_depth",
    help: "Delivery attempts waiting (pending), over all instances.",
    registers: [registry],
    async collect() {
      this.set((await read()).pending);
    },
  });
  new client.Gauge({
    name: "delivery_oldest_pending_age_seconds",
    help: "How long the oldest due attempt has waited.",
    registers: [registry],
    async collect() {
      this.set((await read()).oldestDueSeconds);
    },
  });
  return {
    outcomes: new client.Counter({
      name: "deliveries_total",
      help: "Delivery attempts by outcome (succeeded, retry_scheduled, failed_final, disabled, lost).",
      labelNames: ["outcome"] as const,
      registers: [registry],
    }),
    stages: new client.Histogram({
      name: "delivery_stage_duration_seconds",
      help: "Stages of the delivery engine: exchange (sign and send, slot taken), record (the exchange's end to its " +
        "result committed, the attempt still held), claim (one claim call, for any number of rows).",
      labelNames: ["stage"] as const,
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 10],
      registers: [registry],
    }),
    claimed: new client.Counter({
      name: "delivery_claimed_total",
      help: "Attempts the claims of this instance took.",
      registers: [registry],
    }),
    latency: new client.Histogram({
      name: "delivery_attempt_duration_seconds",
      help: "Time from connecting to the receiver's answer (or the failure).",
      labelNames: ["result"] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
  };
}
