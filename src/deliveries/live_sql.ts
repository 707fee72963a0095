/**
 * The stored functions of deliveries, kept as live SQL beside their owner
 * (`sql/`): the migration runner re-applies these files at every start, so
 * the functions a database runs are always this release's.
 */

/** The live SQL files of deliveries, in the order they are applied. */
export const DELIVERIES_LIVE_SQL: readonly URL[] = [
  // deliveries_reserve calls deliveries_take_accounts and deliveries_due_by_webhook, deliveries_claim calls
  // deliveries_reserve: all in this file.
  new URL("./sql/claim.sql", import.meta.url),
  new URL("./sql/record_results.sql", import.meta.url),
];
