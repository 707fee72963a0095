/** The stored functions of shared code, kept as live SQL beside it (`sql/`), re-applied at every start. */

/** The live SQL files of shared code, in the order they are applied. */
export const SHARED_LIVE_SQL: readonly URL[] = [
  new URL("./sql/ids.sql", import.meta.url),
];
