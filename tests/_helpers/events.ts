/** Events committed by the test process itself, as an emitting service would (NOTIFY wakes the services). */
import type { Sql } from "../../src/db/client.ts";
import { createOutbox } from "../../src/deliveries/outbox.ts";
import { createNotificationHub } from "../../src/notifications/hub.ts";

/** An event id and when its transaction committed (ms since the epoch). */
export interface Committed {
  id: string;
  committedAt: number;
}

/**
 * Commits `count` inbox.created events for the account, in transactions of
 * `batch`, each stamped with the time it is emitted or, given `at`, with `at`
 * (a future `at` queues attempts that are not due yet).
 */
export async function commitInboxEvents(
  sql: Sql,
  accountId: string,
  count: number,
  batch = 10,
  at?: Date,
): Promise<Committed[]> {
  const out: Committed[] = [];
  // This process runs no queue: its hub has no subscriber, and the services hear the NOTIFY.
  const outbox = createOutbox({ sql, hub: createNotificationHub(undefined) });
  for (let i = 0; i < count; i += batch) {
    const ids = await outbox.transaction(async (_tx, emit) => {
      const ids: string[] = [];
      for (let j = i; j < Math.min(count, i + batch); j++) {
        const now = at ?? new Date();
        const eventId = await emit(accountId, "inbox.created", {
          inboxId: `inb_test_${j}`,
          address: `t${j}@inbox.localhost`,
          expiresAt: new Date(now.getTime() + 3_600_000).toISOString(),
        }, now);
        ids.push(eventId);
      }
      return ids;
    });
    const committedAt = Date.now();
    for (const id of ids) out.push({ id, committedAt });
  }
  return out;
}
