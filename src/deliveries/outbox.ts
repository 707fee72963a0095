/**
 * The outbox: the one port through which anything enters the delivery queue.
 *
 * An emitter runs its change in `outbox.transaction`, and calls `emit` in it:
 * the event and one delivery per subscribed active webhook are written in the
 * same transaction as the change (they commit or vanish together), with a
 * NOTIFY that wakes every other instance when it commits. Once the
 * transaction has committed, the outbox wakes this instance's queue itself,
 * so no caller has to remember to.
 */
import type { Sql, Tx } from "../db/client.ts";
import type { NotificationHub } from "../notifications/hub.ts";
import { newId } from "../shared/ids.ts";
import { insertEvent } from "../events/repo.ts";
import type { EventDataMap, EventEnvelope } from "../events/schemas.ts";
import * as repo from "./repo.ts";

/** The channel whose notifications wake every instance's delivery queue. */
export const DELIVERY_CHANNEL = "inbox_deliveries";

/** Emits an event of the account inside the outbox's transaction; resolves to its id. */
export type Emit = <T extends keyof EventDataMap>(
  accountId: string,
  type: T,
  data: EventDataMap[T],
  now: Date,
) => Promise<string>;

/** The outbox port. */
export interface Outbox {
  /** Runs `work` in one transaction with an `emit` bound to it; wakes the queues after commit. */
  transaction<T>(work: (tx: Tx, emit: Emit) => Promise<T>): Promise<T>;
  /** Queues a new first attempt of an existing event to one webhook (redelivery). */
  requeue(eventId: string, webhookId: string, now: Date): Promise<string>;
}

/** Builds the outbox over the database and this instance's hub. */
export function createOutbox(deps: { sql: Sql; hub: Pick<NotificationHub, "publishLocal"> }): Outbox {
  const queue = async (tx: Tx, eventId: string, webhookIds: string[], now: Date): Promise<string[]> => {
    const attempts = webhookIds.map((webhookId) => ({ id: newId("dlv", now.getTime()), webhookId, attempt: 1 }));
    await repo.insertPending(tx, eventId, attempts, now, now);
    await repo.notifyQueued(tx, DELIVERY_CHANNEL);
    return attempts.map((a) => a.id);
  };

  return {
    async transaction(work) {
      let queued = 0;
      // postgres.js types the result of begin() apart from `work`'s; it is what `work` returned.
      const result = await deps.sql.begin((tx) => {
        const emit: Emit = async (accountId, type, data, now) => {
          const eventId = newId("evt", now.getTime());
          const webhookIds = await repo.subscribedWebhookIds(tx, accountId, type);
          // An event nobody subscribes to has nothing to deliver: store nothing.
          if (webhookIds.length === 0) return eventId;
          const envelope: EventEnvelope = { id: eventId, type, createdAt: now.toISOString(), data };
          await insertEvent(tx, { id: eventId, accountId, type, payload: JSON.stringify(envelope), createdAt: now });
          queued += (await queue(tx, eventId, webhookIds, now)).length;
          return eventId;
        };
        return work(tx, emit);
      }) as Awaited<ReturnType<typeof work>>;
      if (queued > 0) deps.hub.publishLocal(DELIVERY_CHANNEL);
      return result;
    },
    async requeue(eventId, webhookId, now) {
      const [id] = await deps.sql.begin((tx) => queue(tx, eventId, [webhookId], now));
      deps.hub.publishLocal(DELIVERY_CHANNEL);
      return id!;
    },
  };
}
