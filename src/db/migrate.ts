/**
 * Applies the numbered SQL files of `migrations/` in order, once each.
 *
 * Everything runs in one transaction under a transaction-level advisory lock,
 * so instances starting together queue behind each other instead of racing,
 * and a failed migration leaves nothing half-applied.
 */
import type { Sql } from "./client.ts";

/** Any fixed number works; it only has to be the same for every instance. */
const MIGRATION_LOCK_KEY = 7_316_245_001;

/** A migration: its version (the file's number), name and SQL. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Reads the migration files shipped beside this module. */
export async function loadMigrations(dir = new URL("./migrations/", import.meta.url)): Promise<Migration[]> {
  const migrations: Migration[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const match = /^(\d{4})_([a-z0-9_]+)\.sql$/.exec(entry.name);
    if (!entry.isFile || !match) continue;
    migrations.push({
      version: Number(match[1]),
      name: match[2]!,
      sql: await Deno.readTextFile(new URL(entry.name, dir)),
    });
  }
  return migrations.sort((a, b) => a.version - b.version);
}

/** Applies pending migrations; returns the versions it applied. */
export async function migrate(sql: Sql, migrations?: Migration[]): Promise<number[]> {
  const all = migrations ?? await loadMigrations();
  return await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`;
    await tx`
      CREATE TABLE IF NOT EXISTS schema_migrations (
        version integer PRIMARY KEY,
        name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`;
    const rows = await tx<{ version: number }[]>`SELECT version FROM schema_migrations`;
    const done = new Set(rows.map((r) => r.version));
    const applied: number[] = [];
    for (const m of all) {
      if (done.has(m.version)) continue;
      await tx.unsafe(m.sql);
      await tx`INSERT INTO schema_migrations (version, name) VALUES (${m.version}, ${m.name})`;
      applied.push(m.version);
    }
    return applied;
  });
}
