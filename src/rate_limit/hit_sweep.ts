/** The minute sweep of the rate log: hits older than any window in use count for nothing. */
import type { Sql } from "../db/client.ts";
import { purgeHits } from "./repo.ts";

/**
 * The longest window any rate policy uses (hourly webhook creations and registrations;
 * `LOGIN_FAILURE_WINDOW_SECONDS` is capped at it); older hits can go.
 */
export const LONGEST_RATE_WINDOW_MS = 3_600_000;

/** Removes hits that left every window by `now`; returns how many. */
export async function sweepOldHits(deps: { sql: Sql }, now: Date): Promise<number> {
  return await purgeHits(deps.sql, new Date(now.getTime() - LONGEST_RATE_WINDOW_MS));
}
