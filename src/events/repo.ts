/** SQL of the outbox: events and their first delivery rows. */
import type { Db } from "../db/client.ts";

/** The notification channel that wakes every instance's delivery queue. */
export const DELIVERY_CHANNEL = "inbox_deliveries";

/** Ids of the account's active webhooks subscribed to `type`. */
export async function subscribedWebhookIds(db: Db, accountId: string, type: string): Promise<string[]> {
  const rows = await db<{ id: string }[]>`
    SELECT id FROM webhooks WHERE account_id = ${accountId} AND active AND ${type} = ANY(events)`;
  return rows.map((r) => r.id);
}

/** Stores an event. */
export async function insertEvent(
  db: Db,
  e: { id: string; accountId: string; type: string; payload: string; createdAt: Date },
): Promise<void> {
  await db`
    INSERT INTO events (id, account_id, type, payload, created_at)
    VALUES (${e.id}, ${e.accountId}, ${e.type}, ${e.payload}, ${e.createdAt})`;
}

/** Queues the first attempt of an event for each webhook, due at once. */
export async function insertFirstDeliveries(
  db: Db,
  eventId: string,
  deliveries: { id: string; webhookId: string }[],
  now: Date,
): Promise<void> {
  await db`
    INSERT INTO deliveries (id, event_id, webhook_id, attempt, status, run_at, created_at)
    SELECT d.id, ${eventId}, d.webhook_id, 1, 'pending', ${now}, ${now}
    FROM unnest(${deliveries.map((d) => d.id)}::text[], ${deliveries.map((d) => d.webhookId)}::text[])
      AS d (id, webhook_id)`;
}

/** Wakes the delivery queues of every instance listening, once the transaction commits. */
export async function notifyDeliveries(db: Db): Promise<void> {
  // NOTIFY is transactional: listeners hear it only if and when this commits.
  await db`SELECT pg_notify(${DELIVERY_CHANNEL}, '')`;
}
