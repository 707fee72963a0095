/**
 * The composition root: every service of one instance, built once from plain
 * values and handed to the HTTP app, the SMTP listener and the sweeps. The
 * entry point (`start.ts`) and the tests' app helper both build an instance
 * here, so the wiring they run is the same.
 *
 * Nothing below this file sees the whole: each feature declares the few
 * values it needs, and `Services` happens to hold them all.
 */
import type { Config } from "./config.ts";
import type { Sql } from "./db/client.ts";
import { type Clock, systemClock } from "./shared/clock.ts";
import { createMetrics, type Metrics } from "./service/metrics.ts";
import type { Sweep } from "./service/sweeps.ts";
import { createSecretBox, type SecretBox } from "./secrets/secret_box.ts";
import { type Resolver, systemResolver } from "./url_safety/resolver.ts";
import type { UrlCheckOptions } from "./url_safety/check_url.ts";
import { createNotificationHub, type NotificationHub } from "./notifications/hub.ts";
import { createOutbox, type Outbox } from "./deliveries/outbox.ts";
import { createDeliveryRuntime, type DeliveryRuntime } from "./deliveries/runtime.ts";
import type { DispatcherDeps } from "./deliveries/dispatcher.ts";
import { sweepExpiredLeases } from "./deliveries/lease_sweep.ts";
import { purgeOldDeliveries } from "./deliveries/purge.ts";
import { purgeOldEvents } from "./events/purge.ts";
import { AuthCache } from "./api_keys/auth_cache.ts";
import { AUTH_CHANNEL, createRevocations, type Revocations } from "./auth/revocations.ts";
import { stillValidCredentials } from "./auth/service.ts";
import { createOpenRequests, type OpenRequests } from "./rate_limit/open_requests.ts";
import { sweepExpiredInboxes } from "./inboxes/expiry.ts";
import { createMessageWaiters, type MessageWaiters } from "./messages/waiters.ts";
import { createEventStreams, type EventStreams } from "./events/streams.ts";
import { sweepExpiredSessions } from "./auth/session_sweep.ts";
import { sweepEndedOverlaps } from "./webhooks/overlap_sweep.ts";
import { sweepExpiredKeys } from "./api_keys/expired_sweep.ts";
import { sweepOldHits } from "./rate_limit/hit_sweep.ts";
import { vacuumDeadRows } from "./db/vacuum_sweep.ts";
import { sweepOldLockouts } from "./rate_limit/lockout_sweep.ts";
import { createDatabaseOutage, databaseAnswers, type DatabaseOutage } from "./db/outage.ts";
import { readCertificates } from "./shared/setting_file.ts";

/** Every service of one instance. */
export interface Services {
  config: Config;
  /** Requests waiting for a message, woken through the hub. */
  waiters: MessageWaiters;
  /** Event streams, woken through the hub. */
  streams: EventStreams;
  sql: Sql;
  /** Requests that find the database unreachable answer 503, SMTP 451; logged once per outage. */
  databaseOutage: DatabaseOutage;
  clock: Clock;
  metrics: Metrics;
  /** Encrypts webhook secrets at rest. */
  secretBox: SecretBox;
  /** Where webhook URLs may point: the resolver and the trusted hosts. */
  urlCheck: UrlCheckOptions;
  /** The one LISTEN connection of this instance, fanned out in process. */
  hub: NotificationHub;
  /** Writes events with their first delivery attempts, in a transaction or in an emitter's statement; queues redeliveries. */
  outbox: Outbox;
  /** The delivery queue, its dispatcher and HTTP client. */
  deliveries: DeliveryRuntime;
  /** What the test endpoint signs and sends with. */
  dispatcher: DispatcherDeps;
  /** Authenticated keys for up to a second (revocations invalidate at once). */
  authCache: AuthCache;
  /** The credentials of open streams and waits, which end when theirs is revoked or expires. */
  revocations: Revocations;
  /** The bounds on each account's open streams and pending waits over all instances. */
  openRequests: OpenRequests;
  /** The minute sweeps, in the order they run. */
  sweeps: readonly Sweep[];
}

/** A composed instance: its services, and what starts and stops them. */
export interface Instance extends Services {
  /**
   * Listens for other instances (when built with `listen`) and starts claiming
   * deliveries; `{ deliveries: false }` leaves the queue to a test that drives
   * it with runOnce/drain.
   */
  start(opts?: { deliveries?: boolean }): Promise<void>;
  /** Ends long polls and event streams at once, so that the HTTP server's shutdown does not wait out their holds. */
  release(): void;
  /** Stops claiming (attempts in flight finish) and listening. */
  stop(): Promise<void>;
}

/** What an instance is built from. */
export interface ComposeOptions {
  config: Config;
  sql: Sql;
  /** The base64 key of `secretBox` (ENCRYPTION_KEY or the embedded mode's generated one). */
  encryptionKey: string;
  /** Listen for other instances' notifications (PostgreSQL only: the embedded database has one connection). */
  listen: boolean;
  /** Vacuum from the sweeps (the embedded database: it runs no autovacuum). */
  vacuum?: boolean;
  clock?: Clock;
  resolver?: Resolver;
  /** Extra CAs for receivers; by default read from WEBHOOK_CA_CERTS. */
  caPem?: string | undefined;
  /** Jitter source of the retry schedule (tests fix it). */
  random?: () => number;
}

/** Builds an instance; nothing runs until `start`. */
export async function compose(opts: ComposeOptions): Promise<Instance> {
  const { config, sql } = opts;
  const clock = opts.clock ?? systemClock;
  const metrics = createMetrics();
  const secretBox = await createSecretBox(opts.encryptionKey);
  const resolver = opts.resolver ?? systemResolver();
  const caPem = opts.caPem ??
    (config.webhookCaCerts ? await readCertificates("WEBHOOK_CA_CERTS", config.webhookCaCerts) : undefined);
  const hub = createNotificationHub(opts.listen ? sql : undefined);
  const outbox = createOutbox({ sql, hub });
  // One per instance: requests, the delivery queue and SMTP report to it, so an outage logs once.
  const databaseOutage = createDatabaseOutage({ probe: () => databaseAnswers(sql) });
  const deliveries = createDeliveryRuntime({
    sql,
    databaseOutage,
    clock,
    config,
    secretBox,
    resolver,
    registry: metrics.registry,
    hub,
    outbox,
    caPem,
    ...(opts.random ? { random: opts.random } : {}),
  });
  const waiters = createMessageWaiters({ sql, clock, hub, registry: metrics.registry });
  const streams = createEventStreams({
    sql,
    hub,
    registry: metrics.registry,
    keepAliveMs: config.eventStreamKeepAliveMs,
  });
  const authCache = new AuthCache();
  hub.subscribe(AUTH_CHANNEL, {
    onNotify: (keyId) => authCache.invalidateKey(keyId),
    // Revocations sent while the connection was down are lost: forget every key.
    onResync: () => authCache.clear(),
  });
  const revocations = createRevocations({
    hub,
    clock,
    stillValid: (ids) => stillValidCredentials(sql, clock, ids),
  });
  const openRequests = createOpenRequests({ sql });
  const services: Services = {
    config,
    waiters,
    streams,
    sql,
    databaseOutage,
    clock,
    metrics,
    secretBox,
    urlCheck: { resolver, trustedHosts: config.webhookTrustedHosts },
    hub,
    outbox,
    deliveries,
    dispatcher: deliveries.dispatcher,
    authCache,
    revocations,
    openRequests,
    sweeps: [
      { name: "expired inboxes", run: (now) => sweepExpiredInboxes({ outbox }, now) },
      { name: "expired delivery leases", run: (now) => sweepExpiredLeases({ sql, hub }, now) },
      { name: "old deliveries", run: (now) => purgeOldDeliveries({ sql, config }, now) },
      { name: "old events", run: (now) => purgeOldEvents({ sql, config }, now) },
      { name: "expired sessions", run: (now) => sweepExpiredSessions({ sql }, now) },
      { name: "expired API keys", run: (now) => sweepExpiredKeys({ sql }, now) },
      { name: "ended secret overlaps", run: (now) => sweepEndedOverlaps({ sql }, now) },
      { name: "old rate-limit hits", run: (now) => sweepOldHits({ sql }, now) },
      { name: "old login lockouts", run: (now) => sweepOldLockouts({ sql }, now) },
      // Last: after the sweeps above have deleted what they delete.
      ...(opts.vacuum ? [{ name: "dead rows", run: (now: Date) => vacuumDeadRows({ sql }, now) }] : []),
    ],
  };
  return {
    ...services,
    async start({ deliveries: claim = true } = {}) {
      await hub.start();
      openRequests.start();
      if (claim) deliveries.start();
    },
    release() {
      waiters.close();
      streams.close();
    },
    async stop() {
      databaseOutage.stop();
      await deliveries.stop();
      await openRequests.stop();
      await hub.stop();
    },
  };
}
