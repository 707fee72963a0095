/** SQL about the database itself. */
import type { Db, Tx } from "./client.ts";

/** One round trip: resolves when the database answers, rejects with the driver's error. */
export async function ping(db: Db): Promise<void> {
  await db`SELECT 1`;
}

/** A row of `schema_migrations`: a migration the database applied. */
export interface AppliedMigration {
  version: number;
  name: string;
  /** SHA-256 (hex) of the file applied; null on rows recorded before checksums were kept. */
  checksum: string | null;
}

/** Waits for the migration lock, held until `tx` ends: instances starting together take turns. */
export async function takeMigrationLock(tx: Tx, key: number): Promise<void> {
  await tx`SELECT pg_advisory_xact_lock(${key})`;
}

/**
 * Creates `schema_migrations` when missing, and adds the checksum column to a
 * table made before checksums were kept. The runner owns this table (no
 * migration creates it), so the runner, not a migration, changes it: the
 * column must exist before any migration is compared with its file.
 */
export async function ensureMigrationTable(tx: Tx): Promise<void> {
  await tx`
    CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now(),
      checksum text
    )`;
  await tx`ALTER TABLE schema_migrations ADD COLUMN IF NOT EXISTS checksum text`;
}

/** The migrations the database applied, by version. */
export async function appliedMigrations(tx: Tx): Promise<AppliedMigration[]> {
  return await tx<AppliedMigration[]>`SELECT version, name, checksum FROM schema_migrations ORDER BY version`;
}

/** Records the checksum of a migration applied before checksums were kept. */
export async function adoptChecksum(tx: Tx, version: number, checksum: string): Promise<void> {
  await tx`UPDATE schema_migrations SET checksum = ${checksum} WHERE version = ${version} AND checksum IS NULL`;
}

/** Records a migration just applied. */
export async function recordMigration(tx: Tx, version: number, name: string, checksum: string): Promise<void> {
  await tx`INSERT INTO schema_migrations (version, name, checksum) VALUES (${version}, ${name}, ${checksum})`;
}

/** A table of the current schema with the dead row versions that a VACUUM would remove. */
export interface DeadRows {
  table: string;
  dead: number;
}

/**
 * The tables of the current schema whose dead row versions passed
 * autovacuum's default threshold: 50, and a fifth of the live rows
 * (`autovacuum_vacuum_threshold`, `autovacuum_vacuum_scale_factor`).
 */
export async function tablesToVacuum(db: Db): Promise<DeadRows[]> {
  return await db<DeadRows[]>`
    SELECT relname AS table, n_dead_tup::int AS dead FROM pg_stat_user_tables
    WHERE schemaname = current_schema() AND n_dead_tup > 50 + 0.2 * n_live_tup
    ORDER BY n_dead_tup DESC`;
}

/** Vacuums one table of the current schema (outside any transaction: VACUUM cannot run in one). */
export async function vacuumTable(db: Db, table: string): Promise<void> {
  await db`VACUUM ${db(table)}`;
}
