/**
 * The embedded database's VACUUM. PGlite runs PostgreSQL as one process with
 * no background workers, so no autovacuum: every update and delete leaves its
 * dead row version and index entries until a VACUUM. Without one the files
 * grew with every delivery recorded and every message purged (a table reuses
 * space only once a VACUUM has freed it: tests/db/vacuum_sweep_test.ts), and
 * the delivery claim's walk webhook by webhook stepped over the dead entries
 * of every attempt sent before it. This sweep does what autovacuum would, at
 * the minute: it vacuums each table past autovacuum's default threshold, one
 * at a time. PostgreSQL runs its own autovacuum: the sweep runs on the
 * embedded database only (src/start.ts).
 */
import type { Sql } from "./client.ts";
import { tablesToVacuum, vacuumTable } from "./repo.ts";

/** Vacuums the tables with enough dead rows; returns how many dead rows they held. */
export async function vacuumDeadRows(deps: { sql: Sql }, _now: Date): Promise<number> {
  let removed = 0;
  for (const { table, dead } of await tablesToVacuum(deps.sql)) {
    await vacuumTable(deps.sql, table);
    removed += dead;
  }
  return removed;
}
