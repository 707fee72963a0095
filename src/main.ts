/**
 * The one impure entry point: read configuration, open and migrate the
 * database, compose the instance, serve HTTP and SMTP, schedule the sweeps,
 * and shut down cleanly on SIGTERM.
 */
import { getLogger } from "@logtape/logtape";
import { ConfigError, loadConfig } from "./config.ts";
import { setupLogging } from "./shared/log.ts";
import { openDatabase } from "./db/client.ts";
import { migrate } from "./db/migrate.ts";
import { compose } from "./compose.ts";
import { createApp } from "./app.ts";
import { runSweeps } from "./service/sweeps.ts";
import { resolveEncryptionKey } from "./secrets/key_source.ts";
import { startSmtpServer } from "./smtp/server.ts";
import { serveHttp } from "./http/serve.ts";

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

  // LISTEN needs a connection of its own: the embedded database has one, and one process.
  const instance = await compose({ config, sql: db.sql, encryptionKey, listen: db.kind === "postgres" });
  const app = createApp(instance);
  // Deno's HTTP server with a deadline on request heads (HTTP_HEADERS_TIMEOUT_MS), which Deno.serve lacks.
  const server = serveHttp({
    port: config.port,
    hostname: config.host,
    headersTimeoutMs: config.httpHeadersTimeoutMs,
    onListen: ({ hostname, port }) => {
      log.info("Listening on http://{hostname}:{port} ({db} database)", { hostname, port, db: db.kind });
    },
  }, app.fetch);
  const smtp = await startSmtpServer(instance);
  await instance.start();
  Deno.cron("inbox-sweeps", "* * * * *", () => runSweeps(instance.sweeps, instance.clock.now()));

  let stopping = false;
  const shutdown = async () => {
    if (stopping) return;
    stopping = true;
    log.info("Shutting down");
    instance.release();
    await Promise.all([server.shutdown(), smtp.close()]);
    await instance.stop();
    await db.close();
    Deno.exit(0);
  };
  Deno.addSignalListener("SIGTERM", shutdown);
  Deno.addSignalListener("SIGINT", shutdown);
}

if (import.meta.main) await main();
