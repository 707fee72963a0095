/**
 * The delivery machinery of one process, wired together: HTTP client,
 * dispatcher, queue, metrics, and the LISTEN that lets other instances wake
 * this one. main.ts starts and stops it; tests build it with their own clock.
 */
import { hostname } from "node:os";
import { getLogger } from "@logtape/logtape";
import type { Sql } from "../db/client.ts";
import type { Config } from "../config.ts";
import type { Clock } from "../shared/clock.ts";
import type { SecretBox } from "../secrets/secret_box.ts";
import type { Resolver } from "../url_safety/resolver.ts";
import type { Metrics } from "../service/metrics.ts";
import { DELIVERY_CHANNEL } from "../events/repo.ts";
import { createWebhookHttpClient, type WebhookHttpClient } from "./http_client.ts";
import { deliver, type DispatcherDeps } from "./dispatcher.ts";
import { DeliveryQueue } from "./queue.ts";
import { SigningKeyCache } from "./signing_keys.ts";
import { createDeliveryMetrics } from "./metrics.ts";
import { purgeOld, recordSuccesses, requeueExpiredLeases } from "./repo.ts";
import { SuccessWriter } from "./success_writer.ts";

const log = getLogger(["inbox", "deliveries"]);

/** Spec 6.3: at most 3 attempts of one trigger in flight. */
export const PER_TRIGGER_CONCURRENCY = 3;
/**
 * Attempts of one webhook in flight over all instances: a receiver that hangs
 * for the whole timeout cannot take every slot and starve the others.
 */
export const PER_WEBHOOK_CONCURRENCY = 16;

/** A process's delivery machinery. */
export interface DeliveryRuntime {
  queue: DeliveryQueue;
  dispatcher: DispatcherDeps;
  http: WebhookHttpClient;
  /** Wakes the local queue (after a commit that emitted events). */
  wake(): void;
  /** Starts claiming; with `listen`, also wakes on other instances' NOTIFY. */
  start(listen: boolean): Promise<void>;
  /** The minute sweep: expired leases back to the queue, old records purged. */
  sweep(): Promise<void>;
  /** Stops claiming and lets attempts in flight finish (bounded by the timeout). */
  stop(): Promise<void>;
}

/** Builds the runtime; nothing runs until `start`. */
export function createDeliveryRuntime(deps: {
  sql: Sql;
  clock: Clock;
  config: Config;
  secretBox: SecretBox;
  resolver: Resolver;
  metrics: Metrics;
  caPem?: string | undefined;
  random?: () => number;
}): DeliveryRuntime {
  const worker = `${hostname()}:${Deno.pid}:${crypto.randomUUID().slice(0, 8)}`;
  const http = createWebhookHttpClient(
    { resolver: deps.resolver, trustedHosts: deps.config.webhookTrustedHosts },
    deps.caPem,
  );
  const dispatcher: DispatcherDeps = {
    sql: deps.sql,
    clock: deps.clock,
    signingKeys: new SigningKeyCache((ciphertext, webhookId) => deps.secretBox.open(ciphertext, webhookId)),
    http,
    successes: new SuccessWriter((results) => recordSuccesses(deps.sql, worker, results)),
    serviceName: deps.config.serviceName,
    timeoutMs: deps.config.deliveryTimeoutMs,
    worker,
    ...(deps.random ? { random: deps.random } : {}),
  };
  const metrics = createDeliveryMetrics(deps.metrics.registry, deps.sql, deps.clock);
  const queue = new DeliveryQueue({
    sql: deps.sql,
    clock: deps.clock,
    worker,
    globalConcurrency: deps.config.deliveryConcurrency,
    perTrigger: PER_TRIGGER_CONCURRENCY,
    perWebhook: PER_WEBHOOK_CONCURRENCY,
    // Past the timeout plus a margin, an attempt's worker is presumed dead.
    leaseMs: deps.config.deliveryTimeoutMs + 5_000,
    deliver: async (d) => {
      const { verdict, recorded } = await deliver(dispatcher, d);
      metrics.outcomes.inc({ outcome: recorded });
      metrics.latency.observe({ result: verdict.ok ? "success" : "failure" }, verdict.durationMs / 1000);
    },
  });
  let unlisten: (() => Promise<void>) | undefined;

  return {
    queue,
    dispatcher,
    http,
    wake: () => queue.wake(),
    async start(listen) {
      if (listen) {
        // onlisten also fires on every re-subscription after a lost
        // connection: NOTIFYs sent meanwhile are lost, so claim once then.
        const sub = await deps.sql.listen(DELIVERY_CHANNEL, () => queue.wake(), () => queue.wake());
        unlisten = () => sub.unlisten();
      }
      queue.start();
    },
    async sweep() {
      const now = deps.clock.now();
      const requeued = await requeueExpiredLeases(deps.sql, now);
      if (requeued > 0) log.info("Requeued {requeued} deliveries whose lease ran out", { requeued });
      await purgeOld(deps.sql, new Date(now.getTime() - deps.config.deliveryRetentionDays * 86_400_000));
      queue.wake();
    },
    async stop() {
      await unlisten?.();
      await queue.stop(deps.config.deliveryTimeoutMs + 1_000);
      http.close();
    },
  };
}
