/** The stored functions of the limits, kept as live SQL beside their owner (`sql/`), re-applied at every start. */

/** The live SQL files of the limits, in the order they are applied. */
export const RATE_LIMIT_LIVE_SQL: readonly URL[] = [
  new URL("./sql/open_requests.sql", import.meta.url),
];
