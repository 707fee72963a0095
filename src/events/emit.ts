/**
 * emit(): the one way an event enters the system. It writes the event and one
 * delivery per subscribed active webhook inside the caller's transaction (the
 * outbox), so the change and its deliveries commit or vanish together.
 * Callers wake their local queue after commit; other instances are woken by
 * the NOTIFY that commits with the transaction.
 */
import type { Tx } from "../db/client.ts";
import { newId } from "../shared/ids.ts";
import * as repo from "./repo.ts";
import type { EventDataMap, EventEnvelope } from "./schemas.ts";

/** Emits an event for the account; returns its id and how many deliveries it queued. */
export async function emit<T extends keyof EventDataMap>(
  tx: Tx,
  accountId: string,
  type: T,
  data: EventDataMap[T],
  now: Date,
): Promise<{ eventId: string; deliveries: number }> {
  const eventId = newId("evt", now.getTime());
  const webhookIds = await repo.subscribedWebhookIds(tx, accountId, type);
  // An event nobody subscribes to has nothing to deliver: store nothing.
  if (webhookIds.length === 0) return { eventId, deliveries: 0 };
  const envelope: EventEnvelope<T, EventDataMap[T]> = { id: eventId, type, createdAt: now.toISOString(), data };
  await repo.insertEvent(tx, { id: eventId, accountId, type, payload: JSON.stringify(envelope), createdAt: now });
  await repo.insertFirstDeliveries(
    tx,
    eventId,
    webhookIds.map((webhookId) => ({ id: newId("dlv", now.getTime()), webhookId })),
    now,
  );
  await repo.notifyDeliveries(tx);
  return { eventId, deliveries: webhookIds.length };
}
