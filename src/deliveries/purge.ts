/** The minute sweep of the delivery log: finished attempts past DELIVERY_RETENTION_DAYS, and events left with none. */
import type { Sql } from "../db/client.ts";
import type { Config } from "../config.ts";
import { purgeUnreferenced } from "../events/repo.ts";
import { purgeOld } from "./repo.ts";

/** Deletes what is older than the retention at `now`; returns how many attempts went. */
export async function purgeOldDeliveries(
  deps: { sql: Sql; config: Pick<Config, "deliveryRetentionDays"> },
  now: Date,
): Promise<number> {
  const before = new Date(now.getTime() - deps.config.deliveryRetentionDays * 86_400_000);
  const purged = await purgeOld(deps.sql, before);
  // After the attempts: an event goes with the last attempt that refers to it.
  await purgeUnreferenced(deps.sql, before);
  return purged;
}
