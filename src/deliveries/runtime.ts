/**
 * The delivery machinery of one process, wired together: HTTP client,
 * dispatcher, queue and metrics. The queue wakes on the hub's delivery
 * channel: a local commit through the outbox, another instance's NOTIFY, or
 * a re-established LISTEN (notifications may have been lost meanwhile).
 */
import { hostname } from "node:os";
import type { Registry } from "prom-client";
import type { Sql } from "../db/client.ts";
import type { Config } from "../config.ts";
import type { Clock } from "../shared/clock.ts";
import type { SecretBox } from "../secrets/secret_box.ts";
import type { Resolver } from "../url_safety/resolver.ts";
import type { NotificationHub } from "../notifications/hub.ts";
import type { DatabaseOutage } from "../db/outage.ts";
import { createWebhookHttpClient } from "./http_client.ts";
import { complete, DISABLE_AFTER_FAILURES, type DispatcherDeps, send } from "./dispatcher.ts";
import { DeliveryQueue } from "./queue.ts";
import { SigningKeyCache } from "./signing_keys.ts";
import { createDeliveryMetrics } from "./metrics.ts";
import { DELIVERY_CHANNEL } from "./outbox.ts";
import type { Outbox } from "./outbox.ts";
import { recordResults, ResultWriter } from "./result_writer.ts";

/** Spec 6.3 ("Concurrency cap: 3 per trigger"): at most 3 attempts of one event in flight. */
export const PER_EVENT_CONCURRENCY = 3;
/**
 * Attempts of one webhook in flight over all instances: a receiver that hangs
 * for the whole timeout cannot take every slot and starve the others.
 */
export const PER_WEBHOOK_CONCURRENCY = 16;

/** A process's delivery machinery. */
export interface DeliveryRuntime {
  queue: DeliveryQueue;
  /** What the test endpoint signs and sends with. */
  dispatcher: DispatcherDeps;
  /** Starts claiming. */
  start(): void;
  /** Stops claiming and lets attempts in flight finish (bounded by the timeout). */
  stop(): Promise<void>;
}

/** What the runtime is built from. */
export interface DeliveryRuntimeDeps {
  sql: Sql;
  clock: Clock;
  config: Pick<
    Config,
    | "webhookTrustedHosts"
    | "serviceName"
    | "deliveryTimeoutMs"
    | "deliveryConcurrency"
    | "deliveryConcurrencyPerAccount"
  >;
  secretBox: SecretBox;
  resolver: Resolver;
  registry: Registry;
  hub: Pick<NotificationHub, "subscribe">;
  /** Writes the `webhook.disabled` event of a failure that disables its webhook, with the failure. */
  outbox: Pick<Outbox, "statement">;
  /** The instance's outage reporter: claims that find the database unreachable go there. */
  databaseOutage: Pick<DatabaseOutage, "absorb">;
  caPem?: string | undefined;
  random?: () => number;
}

/** Builds the runtime; nothing is claimed until `start`. */
export function createDeliveryRuntime(deps: DeliveryRuntimeDeps): DeliveryRuntime {
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
    results: new ResultWriter((results) => recordResults(deps, worker, DISABLE_AFTER_FAILURES, results)),
    serviceName: deps.config.serviceName,
    timeoutMs: deps.config.deliveryTimeoutMs,
    worker,
    ...(deps.random ? { random: deps.random } : {}),
  };
  const metrics = createDeliveryMetrics(deps.registry, deps.sql, deps.clock);
  const queue = new DeliveryQueue({
    sql: deps.sql,
    clock: deps.clock,
    worker,
    databaseOutage: deps.databaseOutage,
    globalConcurrency: deps.config.deliveryConcurrency,
    caps: {
      perEvent: PER_EVENT_CONCURRENCY,
      perWebhook: PER_WEBHOOK_CONCURRENCY,
      perAccount: deps.config.deliveryConcurrencyPerAccount,
      slots: deps.config.deliveryConcurrency,
    },
    observe: (stage, seconds, rows) => {
      metrics.stages.observe({ stage }, seconds);
      if (rows !== undefined) metrics.claimed.inc(rows);
    },
    send: (d, stop) => send(dispatcher, d, stop),
    failed: (verdict) => !verdict.ok,
    complete: async (d, verdict) => {
      metrics.latency.observe({ result: verdict.ok ? "success" : "failure" }, verdict.durationMs / 1000);
      metrics.outcomes.inc({ outcome: await complete(dispatcher, d, verdict) });
    },
  });
  const unsubscribe = deps.hub.subscribe(DELIVERY_CHANNEL, {
    onNotify: () => queue.wake(),
    onResync: () => queue.wake(),
  });

  return {
    queue,
    dispatcher,
    start: () => queue.start(),
    async stop() {
      unsubscribe();
      await queue.stop(deps.config.deliveryTimeoutMs + 1_000);
      await http.close();
    },
  };
}
