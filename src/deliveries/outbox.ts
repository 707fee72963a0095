/**
 * The outbox: how a change commits the events it emits, and the deliveries
 * of the webhooks that subscribe to them, with itself (they commit or vanish
 * together), and how this instance hears of them once they have committed.
 *
 * Events are always written by one statement (`flush`): the events appended
 * to their accounts' logs (events/repo.ts, which holds the lock order), one
 * first attempt per subscribed active webhook (deliveries/repo.ts), and the
 * NOTIFYs that wake every other instance's queue and event streams. A
 * transaction (`transaction`) collects what its work emits and runs that
 * statement last, before the commit; a change that fits in one statement
 * (SMTP's batches, and a batch of delivery results with failures, whose
 * `webhook.disabled` events are appended only for the failures that disable
 * their webhook: `statement`) puts its own CTEs before it, in the same
 * statement, one round trip with no transaction. Either way the outbox runs
 * it, and once it has committed wakes this instance's queue and streams
 * itself: no caller has to remember to.
 */
import type { Db, Fragment, Sql, Tx } from "../db/client.ts";
import type { NotificationHub } from "../notifications/hub.ts";
import { newId } from "../shared/ids.ts";
import { appendEventsCtes, emittedCte, type EmittedEvent, type NewEvent } from "../events/repo.ts";
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
  const inboxId = "inboxId" in data ? data.inboxId : null;
  return { id, type, payload: JSON.stringify(envelope), createdAt: now, inboxId };
}

/** A change written in one statement with its events (`Outbox.statement`). */
export interface StatementChange {
  /** The change's own CTEs, before the outbox's: whatever they lock is locked first. */
  ctes: Fragment;
  /** Its events; one with a `ref` is appended only if the row of that id is among `written`. */
  events: EmittedEvent[];
  /** A query of the ids of the rows the change wrote (e.g. `SELECT id FROM message`). */
  written: Fragment;
  /** The columns (and FROM) of the rows the statement returns, over the change's CTEs. */
  select: Fragment;
}

/** The outbox of one instance. */
export interface Outbox {
  /** Runs `work` in one transaction with an `emit` bound to it; its events are written last, before the commit. */
  transaction<T>(work: (tx: Tx, emit: Emit) => Promise<T>): Promise<T>;
  /** Runs a change and its events as one statement (atomic without a transaction); resolves to its rows. */
  statement<R extends object>(change: StatementChange): Promise<R[]>;
  /** Queues a new first attempt of an existing event to one webhook (redelivery). */
  requeue(eventId: string, webhookId: string, now: Date): Promise<string>;
  /**
   * Queues a new first attempt, in one statement, of every event of the
   * window whose latest attempt on the webhook failed or was cancelled, oldest
   * first (recover); resolves to how many.
   */
  recover(webhookId: string, window: repo.RecoverWindow, now: Date): Promise<number>;
}

/** What a flush tells the outbox: which accounts' logs grew, and whether deliveries were queued. */
interface Flushed {
  eventAccounts: string[] | null;
  queued: boolean;
}

/**
 * The statement that writes `events` after the CTEs of `change` (none in a
 * transaction's flush) and returns `change.select`'s rows, each with what
 * the outbox needs to know.
 */
function flush(db: Db, events: EmittedEvent[], change?: Omit<StatementChange, "events">): Fragment {
  const { cte, emitted } = emittedCte(db, events, change?.written);
  const { ctes, appended } = appendEventsCtes(db, emitted, EVENT_CHANNEL);
  const { cte: queuedCte, queued } = repo.queueFirstAttemptsCte(db, appended, DELIVERY_CHANNEL);
  return db`
    WITH ${change ? db`${change.ctes},` : db``} ${cte}, ${ctes}, ${queuedCte}
    SELECT (SELECT array_agg(DISTINCT ${appended.col("account_id")}) FROM ${appended.from}) AS event_accounts,
      EXISTS (SELECT 1 FROM ${queued.from}) AS queued
      ${change ? db`, ${change.select}` : db``}`;
}

/** Builds the outbox over the database and this instance's hub. */
export function createOutbox(deps: { sql: Sql; hub: Pick<NotificationHub, "publishLocal"> }): Outbox {
  /** Once committed: this instance's streams of those accounts, and its queue if anything was queued. */
  const publish = (rows: Flushed[]) => {
    for (const accountId of new Set(rows.flatMap((r) => r.eventAccounts ?? []))) {
      deps.hub.publishLocal(EVENT_CHANNEL, accountId);
    }
    if (rows.some((r) => r.queued)) deps.hub.publishLocal(DELIVERY_CHANNEL);
  };
  return {
    async transaction(work) {
      let flushing: Promise<Flushed[]> | undefined;
      // postgres.js types the result of begin() apart from `work`'s; it is what `work` returned.
      const result = await deps.sql.begin(async (tx) => {
        // Events wait in memory until `work` is done: written last, they take their place in their accounts'
        // logs under locks held only from there to the commit (events/repo.ts).
        const pending: EmittedEvent[] = [];
        const emit: Emit = (accountId, type, data, now) => {
          const event = newEvent(type, data, now);
          pending.push({ event, accountId });
          return Promise.resolve(event.id);
        };
        const out = await work(tx, emit);
        // Sent, not awaited: COMMIT follows it on the connection at once, so the accounts' locks are held for
        // the server's time alone, not also for a round trip to this process and back. Those locks order each
        // account's events, one transaction at a time, so their hold sets how many events one account can
        // commit: 547 to 572 a second against 478 to 510 when COMMIT waited for the answer (16 emitters of one
        // account, one event to ten webhooks each, four rounds each way alternately, a throwaway script). Should
        // the statement fail, PostgreSQL answers that COMMIT with a rollback, and its error is thrown below.
        if (pending.length > 0) flushing = tx<Flushed[]>`${flush(tx, pending)}`.execute();
        return out;
      }) as Awaited<ReturnType<typeof work>>;
      publish(flushing ? await flushing : []);
      return result;
    },
    async statement<R extends object>(change: StatementChange) {
      const rows = await deps.sql<(R & Flushed)[]>`${flush(deps.sql, change.events, change)}`;
      publish(rows);
      return rows;
    },
    async requeue(eventId, webhookId, now) {
      const id = newId("dlv", now.getTime());
      await repo.insertRedelivery(deps.sql, { id, eventId, webhookId, runAt: now }, DELIVERY_CHANNEL);
      deps.hub.publishLocal(DELIVERY_CHANNEL);
      return id;
    },
    async recover(webhookId, window, now) {
      const queued = await repo.insertRecovered(deps.sql, webhookId, window, now, DELIVERY_CHANNEL);
      if (queued > 0) deps.hub.publishLocal(DELIVERY_CHANNEL);
      return queued;
    },
  };
}
