/**
 * The outbox: the one port through which anything enters the delivery queue.
 *
 * An emitter runs its change in `outbox.transaction`, and calls `emit` in it:
 * every event goes to its account's log (events/repo.ts), and one delivery
 * per subscribed active webhook is queued, in the same transaction as the
 * change (they commit or vanish together), with NOTIFYs that wake every other
 * instance's queue and event streams when it commits. Once the transaction
 * has committed, the outbox wakes this instance's queue and streams itself,
 * so no caller has to remember to.
 *
 * An emitter whose change fits in one statement (SMTP's batches) writes its
 * events in that statement instead, one round trip with no transaction:
 * `inStatement` gives it the CTEs that append them and queue their
 * deliveries, and it calls `committed` once the statement has committed.
 */
import type { Db, Fragment, Sql, Tx } from "../db/client.ts";
import type { NotificationHub } from "../notifications/hub.ts";
import { newId } from "../shared/ids.ts";
import { appendEvents, appendEventsCtes, type NewEvent } from "../events/repo.ts";
import { MAX_WEBHOOKS } from "../webhooks/service.ts";
import { EVENT_CHANNEL } from "../events/streams.ts";
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

/** An event's envelope, as it is stored, streamed and signed: built once, here, for every emitter. */
export function newEvent<T extends keyof EventDataMap>(type: T, data: EventDataMap[T], now: Date): NewEvent {
  const id = newId("evt", now.getTime());
  const envelope: EventEnvelope = { id, type, createdAt: now.toISOString(), data };
  return { id, type, payload: JSON.stringify(envelope), createdAt: now };
}

/**
 * The part of an emitter's single statement that appends its events and
 * queues their deliveries (`Outbox.inStatement`): CTEs to put after the
 * emitter's own, over its CTE of the events to append.
 */
export interface StatementEvents {
  /** `event_lock`, `appended`, `subscribed` and `queued`, in that order, after a comma. */
  ctes: Fragment;
  /** For the final SELECT: whether deliveries were queued, with the NOTIFY that wakes every queue if so. */
  queued: Fragment;
}

/** The outbox port. */
export interface Outbox {
  /** Runs `work` in one transaction with an `emit` bound to it; wakes the queues after commit. */
  transaction<T>(work: (tx: Tx, emit: Emit) => Promise<T>): Promise<T>;
  /**
   * For an emitter whose change and events fit in one statement (one round
   * trip, atomic without a transaction): the CTEs that append the events of
   * its CTE `source` (columns `event_id`, `account_id`, `type`, `payload`,
   * `created_at`, and `ord` from 1 to `events`) and queue one delivery per
   * subscribed active webhook, due at `now`.
   */
  inStatement(db: Db, source: string, events: number, now: Date): StatementEvents;
  /** Once such a statement has committed: wakes this instance's streams of `accounts`, and its queue if it queued any. */
  committed(accounts: Iterable<string>, queued: boolean): void;
  /** Queues a new first attempt of an existing event to one webhook (redelivery). */
  requeue(eventId: string, webhookId: string, now: Date): Promise<string>;
}

/** Builds the outbox over the database and this instance's hub. */
export function createOutbox(deps: { sql: Sql; hub: Pick<NotificationHub, "publishLocal"> }): Outbox {
  return {
    async transaction(work) {
      let queued = 0;
      const accounts = new Set<string>();
      // postgres.js types the result of begin() apart from `work`'s; it is what `work` returned.
      const result = await deps.sql.begin(async (tx) => {
        // Events wait in memory until `work` is done: appended last, they take their place in the
        // account's log under a lock held only from there to the commit (events/repo.ts).
        const pending = new Map<string, NewEvent[]>();
        const emit: Emit = (accountId, type, data, now) => {
          const event = newEvent(type, data, now);
          const list = pending.get(accountId) ?? [];
          list.push(event);
          pending.set(accountId, list);
          return Promise.resolve(event.id);
        };
        const out = await work(tx, emit);
        // Accounts in id order: two transactions emitting for the same accounts take their locks alike.
        for (const accountId of [...pending.keys()].sort()) {
          const events = pending.get(accountId)!;
          const subscribed = await appendEvents(tx, accountId, events, EVENT_CHANNEL);
          accounts.add(accountId);
          if (subscribed.length === 0) continue;
          const createdAt = new Map(events.map((e) => [e.id, e.createdAt]));
          // Each attempt is due when its event was emitted.
          const attempts = subscribed.map((s) => {
            const runAt = createdAt.get(s.eventId)!;
            return { id: newId("dlv", runAt.getTime()), eventId: s.eventId, webhookId: s.webhookId, runAt };
          });
          await repo.insertPending(tx, attempts, DELIVERY_CHANNEL);
          queued += attempts.length;
        }
        return out;
      }) as Awaited<ReturnType<typeof work>>;
      for (const accountId of accounts) deps.hub.publishLocal(EVENT_CHANNEL, accountId);
      if (queued > 0) deps.hub.publishLocal(DELIVERY_CHANNEL);
      return result;
    },
    inStatement(db, source, events, now) {
      // Ids for the deliveries, MAX_WEBHOOKS per event: no account has more webhooks to subscribe.
      const ids = Array.from({ length: events * MAX_WEBHOOKS }, () => newId("dlv", now.getTime()));
      return {
        ctes: db`, ${appendEventsCtes(db, source, EVENT_CHANNEL)}, ${
          repo.insertPendingCtes(db, source, ids, MAX_WEBHOOKS, now)
        }`,
        queued: repo.notifyIfQueued(db, DELIVERY_CHANNEL),
      };
    },
    committed(accounts, queued) {
      for (const accountId of accounts) deps.hub.publishLocal(EVENT_CHANNEL, accountId);
      if (queued) deps.hub.publishLocal(DELIVERY_CHANNEL);
    },
    async requeue(eventId, webhookId, now) {
      const id = newId("dlv", now.getTime());
      await deps.sql.begin((tx) => repo.insertPending(tx, [{ id, eventId, webhookId, runAt: now }], DELIVERY_CHANNEL));
      deps.hub.publishLocal(DELIVERY_CHANNEL);
      return id;
    },
  };
}
