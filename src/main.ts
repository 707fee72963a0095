/**
 * The one impure entry point: read configuration, open and migrate the
 * database, serve HTTP, schedule sweeps, and shut down cleanly on SIGTERM.
 */
import { getLogger } from "@logtape/logtape";
import { ConfigError, loadConfig } from "./config.ts";
import { setupLogging } from "./shared/log.ts";
import { openDatabase } from "./db/client.ts";
import { migrate } from "./db/migrate.ts";
import { createApp } from "./app.ts";
import { createMetrics } from "./service/metrics.ts";
import { runSweeps } from "./service/sweeps.ts";
import { systemClock } from "./shared/clock.ts";
import { resolveEncryptionKey } from "./secrets/key_source.ts";
import { createSecretBox } from "./secrets/secret_box.ts";
import { systemResolver } from "./url_safety/resolver.ts";
import { createDeliveryRuntime } from "./deliveries/runtime.ts";
import { AUTH_CHANNEL, AuthCache } from "./api_keys/auth_cache.ts";
import { startSmtpServer } from "./smtp/server.ts";
import { sweepExpiredInboxes } from "./inboxes/expiry.ts";

const log = getLogger(["inbox", "main"]);

async function main(): Promise<void> {
  let config, encryptionKey;
  try {
    config = loadConfig(Deno.env.toObject());
    encryptionKey = await resolveEncryptionKey(config);
  } catch (err) {
    // A configuration the service cannot run with: say which, and stop.
    if (err instanceof ConfigError) {
      console.error(err.message);
      Deno.exit(2);
    }
    throw err;
  }
  await setupLogging(config.logLevel);

  const db = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.databasePoolSize,
  });
  const applied = await migrate(db.sql);
  if (applied.length > 0) log.info("Applied migrations {applied}", { applied });

  const metrics = createMetrics();
  const secretBox = await createSecretBox(encryptionKey);
  const resolver = systemResolver();
  const caPem = config.webhookCaCerts ? await Deno.readTextFile(config.webhookCaCerts) : undefined;
  const deliveries = createDeliveryRuntime({
    sql: db.sql,
    clock: systemClock,
    config,
    secretBox,
    resolver,
    metrics,
    caPem,
  });
  const authCache = new AuthCache();
  const deps = { config, sql: db.sql, clock: systemClock, metrics, secretBox, resolver, deliveries, authCache };
  const app = createApp(deps);
  const server = Deno.serve({
    port: config.port,
    hostname: config.host,
    onListen: ({ hostname, port }) => {
      log.info("Listening on http://{hostname}:{port} ({db} database)", { hostname, port, db: db.kind });
    },
  }, app.fetch);
  const smtp = await startSmtpServer(deps);

  // LISTEN needs a connection of its own: PGlite has one, and one process.
  await deliveries.start(db.kind === "postgres");
  if (db.kind === "postgres") await db.sql.listen(AUTH_CHANNEL, (keyId) => authCache.invalidateKey(keyId));
  Deno.cron("inbox-sweeps", "* * * * *", async () => {
    await runSweeps(deps);
    try {
      const expired = await sweepExpiredInboxes(deps);
      if (expired > 0) log.info("Expired {expired} inboxes", { expired });
    } catch (err) {
      log.warn("Inbox expiry sweep failed: {error}", { error: String(err) });
    }
    await deliveries.sweep();
  });

  let stopping = false;
  const shutdown = async () => {
    if (stopping) return;
    stopping = true;
    log.info("Shutting down");
    await Promise.all([server.shutdown(), smtp.close()]);
    await deliveries.stop();
    await db.close();
    Deno.exit(0);
  };
  Deno.addSignalListener("SIGTERM", shutdown);
  Deno.addSignalListener("SIGINT", shutdown);
}

if (import.meta.main) await main();
