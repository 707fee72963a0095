/**
 * The minute sweep of leases: the accounts of a worker that died, and the
 * attempts its heartbeat marked in flight, are its own until their lease runs
 * out; then the accounts are forgotten and those attempts go back to the
 * queue. Every queue also does this on its own while it claims; the sweep
 * covers an instance whose queue sleeps.
 */
import type { Sql } from "../db/client.ts";
import type { NotificationHub } from "../notifications/hub.ts";
import { DELIVERY_CHANNEL } from "./outbox.ts";
import { requeueExpiredLeases } from "./repo.ts";

/**
 * Requeues attempts whose lease ran out by `now`; returns how many. It wakes
 * this instance's queue either way: a minute's safety net under NOTIFY.
 */
export async function sweepExpiredLeases(
  deps: { sql: Sql; hub: Pick<NotificationHub, "publishLocal"> },
  now: Date,
): Promise<number> {
  const requeued = await requeueExpiredLeases(deps.sql, now);
  deps.hub.publishLocal(DELIVERY_CHANNEL);
  return requeued;
}
