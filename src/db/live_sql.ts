/**
 * Every owner's live SQL (stored functions written with CREATE OR REPLACE),
 * listed here so the migration runner, and so every start, every test
 * database and the embedded database, applies the same files. An owner keeps
 * its files in `src/<owner>/sql/` and exports their URLs; add that list here.
 */
import { DELIVERIES_LIVE_SQL } from "../deliveries/live_sql.ts";
import { RATE_LIMIT_LIVE_SQL } from "../rate_limit/live_sql.ts";
import { SHARED_LIVE_SQL } from "../shared/live_sql.ts";

/** The live SQL files, in the order the runner applies them after the numbered migrations. */
export const LIVE_SQL: readonly URL[] = [
  // Called by the others' statements: first.
  ...SHARED_LIVE_SQL,
  ...DELIVERIES_LIVE_SQL,
  ...RATE_LIMIT_LIVE_SQL,
];
