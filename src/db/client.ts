/**
 * The one database client: postgres.js against `DATABASE_URL`, or against an
 * embedded PGlite served on a loopback socket when no URL is configured. Both
 * paths run the same SQL through the same driver.
 */
import postgres from "postgres";
import { join } from "node:path";
import { getLogger } from "@logtape/logtape";
import { ConfigError } from "../shared/config_error.ts";
import { onDataDir } from "./data_dir.ts";
import { templateRefusal, unpackTemplate } from "./pgdata_template.ts";

/** A postgres.js client with the service's transforms. */
export type Sql = postgres.Sql<Record<string, never>>;
/** A transaction's client, as passed to `sql.begin`. */
export type Tx = postgres.TransactionSql<Record<string, never>>;
/** A client or a transaction: what repo functions take. */
export type Db = Sql | Tx;
/** A piece of SQL built by one repo file for a statement another one writes (postgres.js nests it with its parameters). */
export type Fragment = postgres.Fragment;

/** An open database: the client, what backs it, and how to close it. */
export interface Database {
  sql: Sql;
  kind: "postgres" | "pglite";
  /** A URL other processes could use to reach the same database, when they can. */
  url: string | undefined;
  close(): Promise<void>;
}

export interface OpenOptions {
  databaseUrl: string | undefined;
  dataDir: string;
  poolSize?: number;
  /** Schema to put first on the search path (tests use one per file). */
  schema?: string;
}

const log = getLogger(["inbox", "db"]);

/**
 * Seconds before a pool connection tries to reconnect. postgres.js's default
 * grows to 20 s, and its count of failures is shared by the whole pool, so
 * after a database restart the queue and LISTEN stayed stalled long after the
 * server was back. A cap of 1 s still left queries parked behind it for up to
 * a second once the server answered (a 2.1 s delivery gap in the restart
 * drill); at 250 ms, ten connections retry a down server at most 40 times a
 * second, which costs it nothing.
 */
export function reconnectDelaySeconds(retries: number): number {
  return Math.min(0.05 * 2 ** retries, 0.25);
}

const baseOptions = {
  transform: postgres.camel,
  // Notices ("relation already exists, skipping") are not worth a log line.
  onnotice: () => {},
  connect_timeout: 10,
  backoff: reconnectDelaySeconds,
} as const;

/** Opens the configured database. */
export async function openDatabase(opts: OpenOptions): Promise<Database> {
  if (opts.databaseUrl) {
    const sql = postgres(opts.databaseUrl, {
      ...baseOptions,
      max: opts.poolSize ?? 10,
      ...(opts.schema ? { connection: { search_path: opts.schema } } : {}),
    }) as unknown as Sql;
    return { sql, kind: "postgres", url: opts.databaseUrl, close: () => sql.end({ timeout: 5 }) };
  }
  return await openEmbedded(opts.dataDir);
}

/**
 * The embedded server's shared buffers. PGlite's data directory has
 * PostgreSQL's default of 128 MB, and inside the WASM heap every buffer once
 * used stays resident: a reopened data directory idled at 280 MiB RSS (PGlite
 * alone, no service) with 128 MB and at 150-160 MiB with 1-16 MB; the whole
 * service, 30 s after a later start, at 359 MiB with 128 MB, 163 MiB with
 * 16 MB and 155 MiB with 8 MB (with the start task's flags). A first start
 * creates every table and dirties a buffer for each, so it fills the pool
 * that a later start leaves partly untouched: 30 s after a first start the
 * service held 149-152 MiB with 8 MB, 147-148 with 4 MB, 143-144 with 2 MB
 * and 142-144 with 1 MB (a later start 142-144, 138-139, 137-140, 136).
 * A page outside the pool is read from the host's page cache through a file
 * read: 1,500 mails of 20 kB into one inbox, then lists and reads of them,
 * took the same time with 2 MB as with 8 MB, within the run-to-run spread.
 */
export const EMBEDDED_SHARED_BUFFERS = "2MB";

/** On a first start (no `pgdata` yet), makes it from the shipped template rather than by PGlite's initdb. */
async function firstStartFromTemplate(pgdata: string): Promise<void> {
  try {
    await Deno.stat(pgdata);
    return;
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  const refusal = await templateRefusal();
  if (refusal !== undefined) {
    log.warn("Making the embedded database with PGlite's initdb, which takes seconds and most of a GiB ({reason})", {
      reason: refusal,
    });
    return;
  }
  await unpackTemplate(pgdata);
}

async function openEmbedded(dataDir: string): Promise<Database> {
  const lockFile = await onDataDir(dataDir, async () => {
    await Deno.mkdir(dataDir, { recursive: true });
    return await Deno.open(join(dataDir, ".lock"), { create: true, write: true });
  });
  // PGlite is single-process: two processes on one data directory would corrupt it.
  if (!(await lockFile.tryLock(true))) {
    lockFile.close();
    throw new ConfigError(
      `DATA_DIR: another process is using the embedded database in ${dataDir}: stop it first, or set DATABASE_URL to share a PostgreSQL server`,
    );
  }
  const started = performance.now();
  const pgdata = join(dataDir, "pgdata");
  await onDataDir(dataDir, () => firstStartFromTemplate(pgdata));
  const { PGlite } = await import("@electric-sql/pglite");
  const { PGLiteSocketServer } = await import("@electric-sql/pglite-socket");
  // After PGlite's own parameters: a later `-c` wins over an earlier one and over postgresql.conf.
  const db = await PGlite.create(pgdata, {
    startParams: [...PGlite.defaultStartParams, "-c", `shared_buffers=${EMBEDDED_SHARED_BUFFERS}`],
  });
  const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0 });
  await server.start();
  const [host, portText] = server.getServerConn().split(":");
  log.info("Embedded PGlite ready in {ms} ms on {conn}", {
    ms: Math.round(performance.now() - started),
    conn: server.getServerConn(),
  });
  // PGlite runs one session: a single connection keeps transactions from interleaving.
  const sql = postgres({
    ...baseOptions,
    host,
    port: Number(portText),
    database: "postgres",
    username: "postgres",
    max: 1,
  }) as unknown as Sql;
  return {
    sql,
    kind: "pglite",
    url: undefined,
    close: async () => {
      await sql.end({ timeout: 5 });
      await server.stop();
      await db.close();
      await lockFile.unlock();
      lockFile.close();
    },
  };
}
