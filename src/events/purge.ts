/** The minute sweep of the event log: events past EVENT_RETENTION_DAYS that no delivery attempt refers to. */
import type { Sql } from "../db/client.ts";
import type { Config } from "../config.ts";
import { purgeOld } from "./repo.ts";

/** Deletes the events older than the retention at `now`; returns how many went. */
export async function purgeOldEvents(
  deps: { sql: Sql; config: Pick<Config, "eventRetentionDays"> },
  now: Date,
): Promise<number> {
  // An event some attempt still refers to stays until the delivery log's own sweep removed that attempt.
  return await purgeOld(deps.sql, new Date(now.getTime() - deps.config.eventRetentionDays * 86_400_000));
}
