/** SQL of the event log: the events table has this one writer. */
import type { Db, Tx } from "../db/client.ts";

/** Stores an event, inside the transaction of the change that caused it. */
export async function insertEvent(
  tx: Tx,
  e: { id: string; accountId: string; type: string; payload: string; createdAt: Date },
): Promise<void> {
  await tx`
    INSERT INTO events (id, account_id, type, payload, created_at)
    VALUES (${e.id}, ${e.accountId}, ${e.type}, ${e.payload}, ${e.createdAt})`;
}

/** Deletes events older than `before` that no delivery attempt refers to any more. */
export async function purgeUnreferenced(db: Db, before: Date): Promise<void> {
  await db`
    DELETE FROM events e WHERE e.created_at < ${before}
      AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id)`;
}
