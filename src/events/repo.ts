/** SQL of the event log: the events table has this one writer. */
import type { Db, Fragment, Tx } from "../db/client.ts";

/** An event to append to an account's log: its envelope is serialised once, and signed as it is. */
export interface NewEvent {
  id: string;
  type: string;
  payload: string;
  createdAt: Date;
}

/*
 * ACCOUNT_FIRST: an event's foreign key locks its account row (KEY SHARE)
 * when its statement ends, and inbox creation takes that row FOR UPDATE
 * before it appends its event under the account's advisory lock. An event
 * statement that took the advisory lock first and the row lock last could
 * deadlock with it (seen in psql, and the longer the statement the likelier:
 * an SMTP batch writes its messages between the two). So the row lock comes
 * first here, and the advisory lock after it, in the order inbox creation
 * takes them.
 */

/**
 * Appends the events a transaction emitted for one account to its log, in
 * the order they were emitted, queues the NOTIFY that wakes the account's
 * streams on every instance, and answers which active webhooks of the
 * account subscribe to each: one statement, the last but the deliveries'
 * before the commit.
 *
 * The order: an advisory lock per account, held to the commit, comes before
 * the numbers, so another transaction of the account takes its numbers only
 * after this one has committed, and `seq` is the account's commit order. It
 * is not a row lock: the delivery claim's account row locks do not wait for
 * it, only the account's other event commits do.
 */
export async function appendEvents(
  tx: Tx,
  accountId: string,
  events: NewEvent[],
  channel: string,
): Promise<{ eventId: string; webhookId: string }[]> {
  return await tx<{ eventId: string; webhookId: string }[]>`
    WITH locked AS (
      SELECT pg_advisory_xact_lock(hashtextextended(${"events:" + accountId}, 0))
      -- The foreign key's lock on the account first (see ACCOUNT_FIRST); one row whatever it finds.
      FROM (SELECT (SELECT a.id FROM accounts a WHERE a.id = ${accountId} FOR KEY SHARE) AS id) account
    ),
    appended AS (
      INSERT INTO events (id, account_id, type, payload, created_at, seq)
      SELECT o.id, ${accountId}, o.type, o.payload, o.created_at, nextval('events_seq')
      FROM (
        SELECT x.* FROM locked, unnest(
          ${events.map((e) => e.id)}::text[],
          ${events.map((e) => e.type)}::text[],
          ${events.map((e) => e.payload)}::text[],
          ${events.map((e) => e.createdAt.toISOString())}::timestamptz[]
        ) WITH ORDINALITY AS x(id, type, payload, created_at, ord)
        ORDER BY x.ord
      ) o
      -- In RETURNING, so it runs whatever the outer query reads (PostgreSQL folds the repeats into one).
      RETURNING id, type, pg_notify(${channel}, ${accountId})
    )
    SELECT a.id AS event_id, w.id AS webhook_id
    FROM appended a JOIN webhooks w ON w.account_id = ${accountId} AND w.active AND a.type = ANY(w.events)`;
}

/**
 * `appendEvents` for an emitter's single statement (the outbox's
 * `inStatement`): CTEs that append the events of the CTE `source` (columns
 * `event_id`, `account_id`, `type`, `payload`, `created_at`, `ord`) in `ord`
 * order, and queue the NOTIFY of each account's streams. `event_lock` takes
 * the accounts' advisory locks in id order, and the events take their
 * numbers only after them (the ORDER BY reads the whole join, locks
 * included, before a single nextval), so `seq` is still each account's
 * commit order. `appended` returns `id`, `account_id` and `type`.
 */
export function appendEventsCtes(db: Db, source: string, channel: string): Fragment {
  const from = db(source);
  return db`
    event_lock AS MATERIALIZED (
      SELECT pg_advisory_xact_lock(hashtextextended('events:' || a.id, 0)) AS locked
      -- The foreign key's locks on the accounts first, in id order (see ACCOUNT_FIRST).
      FROM (
        SELECT ac.id FROM accounts ac WHERE ac.id IN (SELECT s.account_id FROM ${from} s)
        ORDER BY ac.id FOR KEY SHARE
      ) a
    ), appended AS (
      INSERT INTO events (id, account_id, type, payload, created_at, seq)
      SELECT o.event_id, o.account_id, o.type, o.payload, o.created_at, nextval('events_seq')
      FROM (
        SELECT s.event_id, s.account_id, s.type, s.payload, s.created_at
        FROM (SELECT count(*) FROM event_lock) k, ${from} s
        ORDER BY s.ord
      ) o
      RETURNING id, account_id, type, pg_notify(${channel}, account_id)
    )`;
}

/** An event of the account as stored: its id, its place in the log and its envelope (JSON text). */
export interface StoredEvent {
  id: string;
  seq: string;
  type: string;
  payload: string;
}

/** The account's events after `afterSeq` (all when undefined), oldest first, of the given types (all when empty). */
export async function listEvents(
  db: Db,
  accountId: string,
  afterSeq: string | undefined,
  types: readonly string[],
  limit: number,
): Promise<StoredEvent[]> {
  // events_account_seq_idx: one account's log in commit order.
  return await db<StoredEvent[]>`
    SELECT e.id, e.seq::text AS seq, e.type, e.payload FROM events e
    WHERE e.account_id = ${accountId}
      ${afterSeq === undefined ? db`` : db`AND e.seq > ${afterSeq}::bigint`}
      ${types.length > 0 ? db`AND e.type = ANY(${types as string[]}::text[])` : db``}
    -- e.seq, the number: the output column of the same name is its text form.
    ORDER BY e.seq
    LIMIT ${limit}`;
}

/** An event as a stream reads it: the envelope as the UTF-8 bytes stored, never decoded into a string. */
export interface RawEvent {
  id: string;
  seq: string;
  type: string;
  payload: Uint8Array;
}

/** A stream's read: events in log order, and whether more were left unread. */
export interface StreamBatch {
  rows: RawEvent[];
  /** The read stopped at its row or byte bound: there may be more after the last row. */
  more: boolean;
}

const decoder = new TextDecoder();

/**
 * The account's events after `afterSeq` for a stream: at most `limit` events
 * and, beyond the first, no more than `maxBytes` of envelopes, so that a
 * stream's read holds a bounded amount of memory however large the events
 * are (a message's subject and links make an event anything from 300 bytes
 * to megabytes). The envelopes come as the bytes the driver received, not as
 * strings: a stream only copies them into its frames, and 20 streams
 * replaying 20 MB each (the bound's benchmark) turned every byte into a
 * string and back.
 */
export async function readEvents(
  db: Db,
  accountId: string,
  afterSeq: string,
  types: readonly string[],
  limit: number,
  maxBytes: number,
): Promise<StreamBatch> {
  // octet_length of a stored value reads its size from the TOAST header, not the value itself.
  const rows: Uint8Array[][] = await db`
    SELECT x.id, x.seq, x.type, x.payload, x.fetched FROM (
      SELECT l.*, count(*) OVER () AS fetched,
        sum(octet_length(l.payload)) OVER (ORDER BY l.seq) - octet_length(l.payload) AS before
      FROM (
        SELECT e.id, e.seq, e.type, e.payload FROM events e
        WHERE e.account_id = ${accountId} AND e.seq > ${afterSeq}::bigint
          ${types.length > 0 ? db`AND e.type = ANY(${types as string[]}::text[])` : db``}
        ORDER BY e.seq
        LIMIT ${limit}
      ) l
    ) x
    WHERE x.before < ${maxBytes}
    ORDER BY x.seq`.raw();
  const fetched = rows.length === 0 ? 0 : Number(decoder.decode(rows[0]![4]));
  return {
    // Every column is NOT NULL: four values on every row.
    rows: rows.map(([id, seq, type, payload]) => ({
      id: decoder.decode(id!),
      seq: decoder.decode(seq!),
      type: decoder.decode(type!),
      payload: payload!,
    })),
    more: fetched === limit || rows.length < fetched,
  };
}

/** The place of one of the account's events in its log; undefined when it is not one (or no longer kept). */
export async function eventSeq(db: Db, accountId: string, id: string): Promise<string | undefined> {
  const rows = await db<{ seq: string }[]>`
    SELECT seq::text AS seq FROM events WHERE id = ${id} AND account_id = ${accountId}`;
  return rows[0]?.seq;
}

/** The account's last place in the log ("0" when it has none): where a stream without a cursor starts. */
export async function lastSeq(db: Db, accountId: string): Promise<string> {
  const rows = await db<{ seq: string }[]>`
    SELECT coalesce(max(seq), 0)::text AS seq FROM events WHERE account_id = ${accountId}`;
  return rows[0]!.seq;
}

/** Deletes events older than `before` that no delivery attempt refers to any more; returns how many. */
export async function purgeOld(db: Db, before: Date): Promise<number> {
  const rows = await db`
    DELETE FROM events e WHERE e.created_at < ${before}
      AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id)
    RETURNING e.id`;
  return rows.length;
}
