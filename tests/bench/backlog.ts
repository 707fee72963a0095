/** A backlog of deliveries for the drain scenarios: queued an hour away, then released at once. */
import type { Sql } from "../../src/db/client.ts";
import { DELIVERY_CHANNEL } from "../../src/deliveries/outbox.ts";
import { commitInboxEvents } from "../_helpers/events.ts";

/**
 * Commits `events` events of the account in transactions of 100, their first attempts due an hour later, through
 * `emit` (an earlier tree's own, for its schema).
 */
export async function queueBacklog(
  sql: Sql,
  accountId: string,
  events: number,
  emit: typeof commitInboxEvents = commitInboxEvents,
): Promise<void> {
  await emit(sql, accountId, events, 100, new Date(Date.now() + 3_600_000));
}

/** Makes every pending attempt due now, in one statement, and wakes the engines. */
export async function releaseBacklog(sql: Sql): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`UPDATE deliveries SET run_at = now() WHERE status = 'pending'`;
    // NOTIFY is transactional: the engines hear it once the update has committed.
    await tx`SELECT pg_notify(${DELIVERY_CHANNEL}, '')`;
  });
}
