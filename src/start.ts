/**
 * The service once its settings have passed `checkSettings`: open and migrate
 * the database, compose the instance, serve HTTP and SMTP, schedule the
 * sweeps, and shut down cleanly on SIGTERM. src/main.ts loads this module
 * only after those checks, so a refused setting never waits for it to load.
 */
import { getLogger } from "@logtape/logtape";
import type { Config } from "./config.ts";
import type { CheckedSettings } from "./shared/preflight.ts";
import { defaultLogFormat, setupLogging } from "./shared/log.ts";
import { type Database, openDatabase } from "./db/client.ts";
import { waitForDatabase } from "./db/wait_for_database.ts";
import { migrate } from "./db/migrate.ts";
import { compose } from "./compose.ts";
import { createApp } from "./app.ts";
import { runSweeps } from "./service/sweeps.ts";
import { resolveEncryptionKey } from "./secrets/key_source.ts";
import { createSecretBox } from "./secrets/secret_box.ts";
import { keyMatchesDatabase, wrongKeyError } from "./secrets/key_check.ts";
import { listenRefusal } from "./shared/listen_error.ts";
import { type SmtpServerHandle, startSmtpServer } from "./smtp/server.ts";
import { resolveSmtpTls } from "./smtp/tls.ts";
import { type HttpServerHandle, serveHttp } from "./http/serve.ts";

const log = getLogger(["inbox", "main"]);

/** What start-up has opened so far, for main.ts to close before a refusal exits. */
export interface Opened {
  db?: Database;
}

/** Starts the service; a setting it cannot run with is thrown as a ConfigError. */
export async function start(config: Config, settings: CheckedSettings, opened: Opened): Promise<void> {
  const key = await resolveEncryptionKey(config);
  await setupLogging(config.logLevel, { format: config.logFormat ?? defaultLogFormat() });

  const db = opened.db = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.databasePoolSize,
  });
  if (config.databaseUrl) {
    await waitForDatabase(db.sql, { databaseUrl: config.databaseUrl, timeoutMs: config.databaseConnectTimeoutMs });
  }
  const applied = await migrate(db.sql);
  if (applied.length > 0) log.info("Applied migrations {applied}", { applied });
  if (!(await keyMatchesDatabase(db.sql, await createSecretBox(key.key)))) {
    // A key generated just now was never the database's: leave DATA_DIR as it was found.
    if (key.source === "generated") await Deno.remove(key.path).catch(() => {});
    throw wrongKeyError(key);
  }
  if (key.source === "generated") {
    log.info("Generated the encryption key of webhook secrets into {path}: keep it with the database", {
      path: key.path,
    });
  }

  // After the database is open: on the embedded one, this process holds DATA_DIR, where the certificate is kept.
  const smtpTls = await resolveSmtpTls(config);

  // LISTEN needs a connection of its own: the embedded database has one, and one process.
  const instance = await compose({
    config,
    sql: db.sql,
    encryptionKey: key.key,
    listen: db.kind === "postgres",
    vacuum: db.kind === "pglite",
    caPem: settings.caPem,
  });
  const app = createApp(instance);
  const listeners: { http?: HttpServerHandle; smtp?: SmtpServerHandle; smtps?: SmtpServerHandle } = {};
  let stopping = false;
  const shutdown = async () => {
    if (stopping) return;
    stopping = true;
    log.info("Shutting down");
    instance.release();
    await Promise.all([listeners.http?.shutdown(), listeners.smtp?.close(), listeners.smtps?.close()]);
    await instance.stop();
    await db.close();
    Deno.exit(0);
  };
  // Before listening: a SIGTERM as soon as /healthz answers still shuts down cleanly.
  Deno.addSignalListener("SIGTERM", shutdown);
  Deno.addSignalListener("SIGINT", shutdown);

  try {
    // Deno's HTTP server with a deadline on request heads (HTTP_HEADERS_TIMEOUT_MS), which Deno.serve lacks.
    listeners.http = serveHttp({
      port: config.port,
      hostname: config.host,
      headersTimeoutMs: config.httpHeadersTimeoutMs,
      onListen: ({ hostname, port }) => {
        // One value for the whole address: LogTape quotes each string it puts in a message.
        log.info("Listening on {url} ({db} database)", {
          url: `http://${hostname}:${port}`,
          hostname,
          port,
          db: db.kind,
        });
      },
    }, app.fetch);
  } catch (err) {
    // The trial bind passed, but the port can still be taken in between.
    throw listenRefusal(err, "PORT", config.host, config.port) ?? err;
  }
  listeners.smtp = await startSmtpServer(instance, { tls: smtpTls }).catch((err) => {
    throw listenRefusal(err, "SMTP_PORT", config.host, config.smtpPort) ?? err;
  });
  const smtpsPort = config.smtpsPort;
  if (smtpsPort !== undefined) {
    listeners.smtps = await startSmtpServer(instance, { tls: smtpTls, implicitTls: true, port: smtpsPort }).catch(
      (err) => {
        throw listenRefusal(err, "SMTPS_PORT", config.host, smtpsPort) ?? err;
      },
    );
  }
  if (stopping) return;
  await instance.start();
  if (stopping) return;
  Deno.cron("inbox-sweeps", "* * * * *", () => runSweeps(instance.sweeps, instance.clock.now()));
}
