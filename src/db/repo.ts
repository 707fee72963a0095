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
