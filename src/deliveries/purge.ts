/** The minute sweep of the delivery log: finished attempts past DELIVERY_RETENTION_DAYS. */
import type { Sql } from "../db/client.ts";
import type { Config } from "../config.ts";
import { purgeOld } from "./repo.ts";

/** Deletes finished attempts older than the retention at `now`; returns how many went. */
export async function purgeOldDeliveries(
  deps: { sql: Sql; config: Pick<Config, "deliveryRetentionDays"> },
  now: Date,
): Promise<number> {
  // Their events go with the event log's own sweep (events/purge.ts), once no attempt refers to them.
  return await purgeOld(deps.sql, new Date(now.getTime() - deps.config.deliveryRetentionDays * 86_400_000));
}
