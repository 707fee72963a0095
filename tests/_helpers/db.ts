/**
 * A fresh schema on the real PostgreSQL server for each test file, migrated
 * and dropped afterwards, so tests never depend on leftovers.
 */
import postgres from "postgres";
import { openDatabase, type Sql } from "../../src/db/client.ts";
import { migrate } from "../../src/db/migrate.ts";

/** The server tests run against (the machine's PostgreSQL by default). */
export const TEST_DATABASE_URL = Deno.env.get("TEST_DATABASE_URL") ?? "postgres://postgres@127.0.0.1:5432/test";

/** A migrated schema of its own and a pool on it. */
export interface TestDb {
  sql: Sql;
  schema: string;
  /** Another pool on the same schema, as a second instance would have. */
  connect(poolSize?: number): Promise<Sql>;
  close(): Promise<void>;
}

/**
 * Creates the database `url` names when the server does not have it
 * (connecting to the server's `postgres` database to do so), so that a fresh
 * PostgreSQL needs no set-up before `deno task test`.
 */
export async function ensureDatabase(url: string): Promise<void> {
  const probe = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await probe`SELECT 1`;
    return;
  } catch (err) {
    if ((err as { code?: string }).code !== "3D000") throw err; // 3D000: invalid_catalog_name
  } finally {
    await probe.end();
  }
  const server = new URL(url);
  const name = decodeURIComponent(server.pathname.slice(1));
  server.pathname = "/postgres";
  const admin = postgres(server.href, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`CREATE DATABASE "${name.replaceAll('"', '""')}"`);
  } catch (err) {
    // Another test process created it meanwhile: 42P04 duplicate_database, or 23505 when both
    // CREATE DATABASE statements ran at the same time.
    if (!["42P04", "23505"].includes((err as { code?: string }).code ?? "")) throw err;
  } finally {
    await admin.end();
  }
}

let databaseReady: Promise<void> | undefined;

async function adminQuery(text: string): Promise<void> {
  databaseReady ??= ensureDatabase(TEST_DATABASE_URL);
  await databaseReady;
  const admin = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(text);
  } finally {
    await admin.end();
  }
}

/**
 * Creates and migrates a new schema; `migrated: false` leaves it empty, for a
 * service of another release that migrates it at its start (the benches'
 * side-by-side trees).
 */
export async function createTestDb({ migrated = true } = {}): Promise<TestDb> {
  const schema = `t_${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;
  await adminQuery(`CREATE SCHEMA ${schema}`);
  const closers: Array<() => Promise<void>> = [];
  const connect = async (poolSize = 5): Promise<Sql> => {
    const db = await openDatabase({ databaseUrl: TEST_DATABASE_URL, dataDir: "", poolSize, schema });
    closers.push(db.close);
    return db.sql;
  };
  const sql = await connect(5);
  if (migrated) await migrate(sql);
  return {
    sql,
    schema,
    connect,
    close: async () => {
      for (const close of closers.reverse()) await close();
      await adminQuery(`DROP SCHEMA ${schema} CASCADE`);
    },
  };
}
