/** The minute sweep of API keys: a key that expired stays listed for a week (with its `expiresAt`), then goes. */
import type { Sql } from "../db/client.ts";
import { purgeExpiredKeys } from "./repo.ts";
import { EXPIRED_KEYS_LISTED_MS } from "./service.ts";

/** Removes keys that expired more than a week before `now`; returns how many. */
export async function sweepExpiredKeys(deps: { sql: Sql }, now: Date): Promise<number> {
  return await purgeExpiredKeys(deps.sql, new Date(now.getTime() - EXPIRED_KEYS_LISTED_MS));
}
