/** SQL of the event log: the events table has this one writer. */
import type { Db, Fragment } from "../db/client.ts";
import { type Relation, relation } from "../db/relation.ts";

/** An event to append to an account's log: its envelope is serialised once, and signed as it is. */
export interface NewEvent {
  id: string;
  type: string;
  payload: string;
  createdAt: Date;
  /** The inbox the event is about (a key limited to some inboxes reads only theirs); null for none. */
  inboxId: string | null;
}

/** An event as an emitter hands it to the outbox: its account, and the row of the change it belongs to. */
export interface EmittedEvent {
  event: NewEvent;
  accountId: string;
  /**
   * The id of the row of the emitter's change that the event announces (a
   * stored message): the event is appended only if that row was written.
   * Undefined: always appended.
   */
  ref?: string | undefined;
}

/** The columns of `emitted`, the events a statement appends. */
export type EmittedColumns = "event_id" | "account_id" | "type" | "payload" | "created_at" | "inbox_id" | "ord";
/** The columns of `appended`, the events a statement appended. */
export type AppendedColumns = "id" | "account_id" | "type" | "created_at";

/**
 * The CTE `emitted`: the events to append, in the order given (`ord`), less
 * those whose `ref` is not among `written` (the ids of the rows the
 * emitter's own CTEs wrote).
 */
export function emittedCte(
  db: Db,
  events: EmittedEvent[],
  written: Fragment | undefined,
): { cte: Fragment; emitted: Relation<EmittedColumns> } {
  return {
    cte: db`emitted AS MATERIALIZED (
      SELECT e.event_id, e.account_id, e.type, e.payload, e.created_at, e.inbox_id, e.ord
      FROM unnest(
        ${events.map((e) => e.event.id)}::text[], ${events.map((e) => e.accountId)}::text[],
        ${events.map((e) => e.event.type)}::text[], ${events.map((e) => e.event.payload)}::text[],
        ${events.map((e) => e.event.createdAt.toISOString())}::timestamptz[],
        ${events.map((e) => e.ref ?? null)}::text[], ${events.map((e) => e.event.inboxId)}::text[]
      ) WITH ORDINALITY AS e(event_id, account_id, type, payload, created_at, ref, inbox_id, ord)
      ${written ? db`WHERE e.ref IS NULL OR e.ref IN (${written})` : db``}
    )`,
    emitted: relation(db, "emitted"),
  };
}

/**
 * The CTEs that append the events of `emitted` to their accounts' logs, in
 * `ord` order, with the NOTIFY that wakes each account's streams on every
 * instance (`appended` returns what was appended). This is the one place
 * that writes events, and the one place of the lock order of every
 * statement that does:
 *
 * 1. The accounts' rows, FOR KEY SHARE, in id order. An event's foreign key
 *    takes that lock anyway when the statement ends, and inbox creation
 *    takes the row FOR UPDATE before it emits: a statement that took the
 *    advisory lock first and the row lock last deadlocked with it (seen in
 *    psql, twice; the longer the statement the likelier: an SMTP batch
 *    writes its messages before its events). Whatever an emitter locks
 *    itself (inboxes, an account FOR UPDATE) comes before, in its own CTEs
 *    or earlier in its transaction. The delivery results' statement, whose
 *    own locks are webhooks' rows (deliveries/sql/record_results.sql), takes
 *    the accounts' rows FOR KEY SHARE before them, so a PATCH that holds an
 *    account FOR UPDATE and then updates its webhook never waits on it in a
 *    circle; and it locks them FOR NO KEY UPDATE, which the foreign-key
 *    checks of a statement's new attempts (FOR KEY SHARE of their webhooks,
 *    taken under the advisory lock below) do not wait for.
 * 2. An advisory lock per account, held to the commit, in id order.
 * 3. The numbers (`seq`), taken only after every lock: the ORDER BY reads
 *    the whole join, locks included, before a single nextval. So another
 *    statement of the account takes its numbers only after this one has
 *    committed, and `seq` is the account's commit order. The advisory lock
 *    is not a row lock: the delivery claim's account row locks do not wait
 *    for it, only the account's other event commits do.
 */
export function appendEventsCtes(
  db: Db,
  emitted: Relation<EmittedColumns>,
  channel: string,
): { ctes: Fragment; appended: Relation<AppendedColumns> } {
  return {
    ctes: db`event_lock AS MATERIALIZED (
      SELECT pg_advisory_xact_lock(hashtextextended('events:' || a.id, 0)) AS locked
      FROM (
        SELECT ac.id FROM accounts ac WHERE ac.id IN (SELECT ${emitted.col("account_id")} FROM ${emitted.from})
        ORDER BY ac.id FOR KEY SHARE
      ) a
    ), appended AS (
      INSERT INTO events (id, account_id, type, payload, created_at, inbox_id, seq)
      SELECT o.event_id, o.account_id, o.type, o.payload, o.created_at, o.inbox_id, nextval('events_seq')
      FROM (
        SELECT ${emitted.col("event_id")}, ${emitted.col("account_id")}, ${emitted.col("type")},
          ${emitted.col("payload")}, ${emitted.col("created_at")}, ${emitted.col("inbox_id")}
        FROM (SELECT count(*) FROM event_lock) k, ${emitted.from}
        ORDER BY ${emitted.col("ord")}
      ) o
      RETURNING id, account_id, type, created_at, pg_notify(${channel}, account_id)
    )`,
    appended: relation(db, "appended"),
  };
}

/** An event of the account as stored: its id, its place in the log and its envelope (JSON text). */
export interface StoredEvent {
  id: string;
  seq: string;
  type: string;
  payload: string;
}

/** Which of an account's events a reader sees: some types (all when empty), some inboxes' (all when null). */
export interface LogView {
  accountId: string;
  types: readonly string[];
  /** A key limited to some inboxes sees only the events about them (no others: webhooks', tests'). */
  inboxIds: readonly string[] | null;
}

/** The conditions of `view` on the events `e`. */
function inView(db: Db, view: LogView) {
  // events_account_seq_idx: one account's log in commit order; the rest filters it.
  return db`e.account_id = ${view.accountId}
    ${view.types.length > 0 ? db`AND e.type = ANY(${view.types as string[]}::text[])` : db``}
    ${view.inboxIds === null ? db`` : db`AND e.inbox_id = ANY(${view.inboxIds as string[]}::text[])`}`;
}

/** The events of `view` after `afterSeq` (all when undefined), oldest first. */
export async function listEvents(
  db: Db,
  view: LogView,
  afterSeq: string | undefined,
  limit: number,
): Promise<StoredEvent[]> {
  return await db<StoredEvent[]>`
    SELECT e.id, e.seq::text AS seq, e.type, e.payload FROM events e
    WHERE ${inView(db, view)}
      ${afterSeq === undefined ? db`` : db`AND e.seq > ${afterSeq}::bigint`}
    -- e.seq, the number: the output column of the same name is its text form.
    ORDER BY e.seq
    LIMIT ${limit}`;
}

/** An event as a live stream writes it: its id, its place in the log and its frame. */
export interface FrameEvent {
  id: string;
  seq: string;
  /** The event's Server-Sent Events frame (`frameSql`), as the bytes the driver received. */
  frame: Uint8Array;
}

/** A live group's read: events in log order, and whether more were left unread. */
export interface StreamBatch {
  rows: FrameEvent[];
  /** The read stopped at its row or byte bound: there may be more after the last row. */
  more: boolean;
}

const decoder = new TextDecoder();

/**
 * The account's events after `afterSeq` for the streams that follow its log
 * live (events/fanout.ts), each as its frame: at most `limit` events and,
 * beyond the first, no more than `maxBytes` of envelopes, so that a read
 * holds a bounded amount of memory however large the events are (a
 * message's subject and links make an event anything from 300 bytes to
 * megabytes). The frames come as bytes, never decoded into strings.
 */
export async function readEvents(
  db: Db,
  view: LogView,
  afterSeq: string,
  limit: number,
  maxBytes: number,
): Promise<StreamBatch> {
  const rows: Uint8Array[][] = await db`
    SELECT x.id, x.seq, ${frameSql(db, "x")}, x.fetched FROM (${boundedRead(db, view, afterSeq, limit)}) x
    WHERE x.before < ${maxBytes}
    ORDER BY x.seq`.raw();
  const fetched = rows.length === 0 ? 0 : Number(decoder.decode(rows[0]![3]));
  return {
    // Every column is NOT NULL: three values on every row.
    rows: rows.map(([id, seq, frame]) => ({
      id: decoder.decode(id!),
      seq: decoder.decode(seq!),
      // A copy: a view would hold the driver's whole buffer for as long as the group's ring keeps the row.
      frame: frame!.slice(),
    })),
    more: fetched === limit || rows.length < fetched,
  };
}

/**
 * The account's events after `afterSeq` (at most `limit`, in log order) with
 * `fetched`, how many that is, and `before`, the bytes of the envelopes ahead
 * of each: a read keeps the rows whose `before` is under its byte bound.
 */
function boundedRead(db: Db, view: LogView, afterSeq: string, limit: number) {
  // octet_length of a stored value reads its size from the TOAST header, not the value itself.
  return db`
    SELECT l.*, count(*) OVER () AS fetched,
      sum(octet_length(l.payload)) OVER (ORDER BY l.seq) - octet_length(l.payload) AS before
    FROM (
      SELECT e.id, e.seq, e.type, e.payload FROM events e
      WHERE ${inView(db, view)} AND e.seq > ${afterSeq}::bigint
      ORDER BY e.seq
      LIMIT ${limit}
    ) l`;
}

/** A replay's read: its events' frames as one buffer, where it stands after them, and whether more are left. */
export interface FrameBatch {
  /** The Server-Sent Events frames of the events read, in log order (empty when none). */
  frames: Uint8Array;
  /** The seq of the last event read (undefined when none). */
  lastSeq: string | undefined;
  more: boolean;
}

/**
 * `readEvents` for a stream catching up on its own: the same events, their
 * frames assembled by the database into one buffer, which the stream copies
 * once and writes as one chunk. No object per event is made: with 20 streams
 * replaying 20 MB of 1 KB events to clients that do not read, an object per
 * event and its frame's parts added 115 MiB to the service, one buffer per
 * read 79-88 MiB (tests/bench/README.md, "tenants").
 */
export async function readFrames(
  db: Db,
  view: LogView,
  afterSeq: string,
  limit: number,
  maxBytes: number,
): Promise<FrameBatch> {
  const rows: (Uint8Array | null)[][] = await db`
    SELECT string_agg(${frameSql(db, "x")}, '' ORDER BY x.seq), max(x.seq)::text, max(x.fetched), count(*)
    FROM (${boundedRead(db, view, afterSeq, limit)}) x
    WHERE x.before < ${maxBytes}`.raw();
  const [frames, last, fetched, read] = rows[0]!;
  const n = (b: Uint8Array | null | undefined) => b ? Number(decoder.decode(b)) : 0;
  return {
    // A copy: the driver's buffer holds the whole message it arrived in.
    frames: frames ? frames.slice() : new Uint8Array(),
    lastSeq: last ? decoder.decode(last) : undefined,
    more: n(fetched) === limit || n(read) < n(fetched),
  };
}

/**
 * An event's Server-Sent Events frame, in SQL, from the columns `id`, `type`
 * and `payload` of `table`: `event: <type>`, one `data:` line per line of the
 * envelope, `id: <id>` and a blank line. The frame is made where the rows
 * are, so that the service never holds an event as a string: an envelope is
 * JSON.stringify output, one line, and the regular expression runs only on
 * one that has a line break.
 */
function frameSql(db: Db, table: string) {
  const t = db(table);
  return db`'event: ' || ${t}.type || E'\ndata: ' ||
    CASE WHEN strpos(${t}.payload, E'\n') > 0 OR strpos(${t}.payload, E'\r') > 0
      THEN regexp_replace(${t}.payload, E'\r\n|\r|\n', E'\ndata: ', 'g')
      ELSE ${t}.payload END ||
    E'\nid: ' || ${t}.id || E'\n\n'`;
}

/** The place of an event of `view` (its types aside) in the log; undefined when it is none of its (or no longer kept). */
export async function eventSeq(db: Db, view: LogView, id: string): Promise<string | undefined> {
  const rows = await db<{ seq: string }[]>`
    SELECT e.seq::text AS seq FROM events e WHERE e.id = ${id} AND ${inView(db, { ...view, types: [] })}`;
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
