/**
 * The instants PostgreSQL's `timestamptz` holds as this service writes them.
 * postgres.js sends a Date as `toISOString()`: PostgreSQL has no year 0, and
 * from year 10000 on that form has a sign and six digits (`+010000-...`),
 * which PostgreSQL refuses. So a time given by a client, directly or inside a
 * cursor, must fall in the UTC years 0001 to 9999 before it reaches a query.
 */

/** The first storable instant, as the API writes timestamps. */
export const STORABLE_TIME_MIN = "0001-01-01T00:00:00Z";

/** The last storable instant at the API's millisecond precision. */
export const STORABLE_TIME_MAX = "9999-12-31T23:59:59.999Z";

const MIN_MS = Date.parse(STORABLE_TIME_MIN);
const MAX_MS = Date.parse(STORABLE_TIME_MAX);

/** Whether an instant (epoch milliseconds) can be written to and compared in the database; false for NaN. */
export function isStorableTime(ms: number): boolean {
  return ms >= MIN_MS && ms <= MAX_MS;
}
