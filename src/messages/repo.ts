/**
 * SQL of messages and their attachments. A message is only ever read through
 * its inbox (`inbox_id`), and the caller has checked that the inbox is one of
 * the account's live inboxes, except where a statement checks it itself.
 */
import type { Db, Fragment, Tx } from "../db/client.ts";
import type { NewEvent } from "../events/repo.ts";
import type { After } from "../inboxes/repo.ts";
import type { AttachmentMeta, Link, MessageFilters, MessageRow, MessageSummaryRow } from "./schemas.ts";

const SUMMARY_COLUMNS = "id, inbox_id, from_address, to_address, subject, size, received_at";

/** A received message as it is stored for the live inbox of one address. */
export interface NewMessage {
  id: string;
  /** The recipient (lowercase); the copy is stored only if it is the address of a live inbox. */
  address: string;
  from: string;
  subject: string;
  text: string | null;
  html: string | null;
  headers: Record<string, string>;
  attachments: AttachmentMeta[];
  codes: string[];
  links: Link[];
  size: number;
  raw: Uint8Array;
}

/** An inbox that got messages of a batch. */
export interface ReceivingInbox {
  id: string;
  accountId: string;
  address: string;
}

/**
 * Stores a batch of received messages, each for the live inbox of its
 * address, with their raw bytes and attachment contents, and queues the
 * NOTIFY that wakes each inbox's waiters on every instance: one statement, so
 * that the inboxes are locked for one round trip and the commit only.
 * Returns the inboxes that got messages; a copy whose address is no live
 * inbox (expired or deleted since the RCPT check) is not stored.
 *
 * The order: the inboxes are locked first (NO KEY UPDATE, in id order, so
 * that two batches sharing inboxes cannot deadlock; a DELETE waits for the
 * commit), and the rows take their `seq` (the column's default) in the order
 * given. A second batch for the same inbox waits at that lock until the first
 * commits, so seq follows commit order and a follower's `after` cursor never
 * skips a message committed later with a smaller seq.
 */
export async function storeMessages(
  tx: Tx,
  messages: NewMessage[],
  contents: NewContent[],
  receivedAt: Date,
  channel: string,
): Promise<ReceivingInbox[]> {
  const addresses = [...new Set(messages.map((m) => m.address))];
  return await tx<ReceivingInbox[]>`
    WITH ${copyCte(tx, messages)}, locked AS (
      SELECT id, account_id, address FROM inboxes
      WHERE address = ANY(${addresses}::text[]) AND expires_at > ${receivedAt}
      ORDER BY id
      FOR NO KEY UPDATE
    ), stored AS (
      SELECT c.*, l.id AS inbox_id FROM copy c JOIN locked l ON l.address = c.address
    ), ${messageCte(tx, receivedAt)}
    ${attachmentsCte(tx, contents)}
    -- Every locked inbox gets a message: its address is one of the batch's.
    SELECT id, account_id, address, pg_notify(${channel}, id) FROM locked`;
}

/**
 * The CTE `copy` of a batch's statement: its messages' columns, one row per
 * copy, `ord` numbering them from 1 in the order given. Columns travel as
 * arrays; byte strings as base64 text (the driver sends no bytea arrays).
 */
function copyCte(db: Db, messages: NewMessage[]): Fragment {
  const json = (f: (m: NewMessage) => unknown) => messages.map((m) => JSON.stringify(f(m)));
  return db`copy AS (
      SELECT * FROM unnest(
        ${messages.map((m) => m.id)}::text[], ${messages.map((m) => m.address)}::text[],
        ${messages.map((m) => m.from)}::text[], ${messages.map((m) => m.subject)}::text[],
        ${messages.map((m) => m.text)}::text[], ${messages.map((m) => m.html)}::text[],
        ${json((m) => m.headers)}::text[], ${json((m) => m.attachments)}::text[],
        ${json((m) => m.codes)}::text[], ${json((m) => m.links)}::text[],
        ${messages.map((m) => m.size)}::integer[], ${messages.map((m) => m.raw.toBase64())}::text[]
      ) WITH ORDINALITY
        AS c(id, address, from_address, subject, text_body, html_body, headers, attachments, codes, links, size,
          raw, ord)
    )`;
}

/**
 * The CTE `message` of a batch's statement: inserts the rows of the CTE
 * `stored` (the columns of `copy` and the `inbox_id` each copy is stored
 * for), in `ord` order, so that each inbox's `seq` follows the batch's order.
 */
function messageCte(db: Db, receivedAt: Date): Fragment {
  return db`message AS (
      INSERT INTO messages (id, inbox_id, from_address, to_address, subject, text_body, html_body, headers,
        attachments, codes, links, size, raw, received_at)
      SELECT s.id, s.inbox_id, s.from_address, s.address, s.subject, s.text_body, s.html_body, s.headers::jsonb,
        s.attachments::jsonb, s.codes::jsonb, s.links::jsonb, s.size, decode(s.raw, 'base64'), ${receivedAt}
      FROM stored s
      ORDER BY s.ord
      RETURNING id
    )`;
}

/** An attachment's contents, for the message of a batch it belongs to. */
export interface NewContent {
  id: string;
  messageId: string;
  content: Uint8Array;
}

/**
 * The attachments CTE of a batch's statement: the contents of the messages
 * the CTE `message` inserted (none for a copy that was not stored). Byte
 * strings travel as base64 text: the driver sends no bytea arrays.
 */
function attachmentsCte(db: Db, contents: NewContent[]): Fragment {
  if (contents.length === 0) return db``;
  return db`, attachment AS (
      INSERT INTO attachments (id, message_id, content)
      SELECT a.id, a.message_id, decode(a.content, 'base64')
      FROM unnest(
        ${contents.map((c) => c.id)}::text[], ${contents.map((c) => c.messageId)}::text[],
        ${contents.map((c) => c.content.toBase64())}::text[]
      ) AS a(id, message_id, content)
      WHERE a.message_id IN (SELECT id FROM message)
    )`;
}

/** A copy of a received message for an inbox known by id, with the `message.received` event it emits. */
export interface NewCopy extends NewMessage {
  /** The inbox the RCPT check found for the address; the copy is stored only if it is still live. */
  inboxId: string;
  event: NewEvent;
}

/** What `storeWithEvents` did. */
export interface StoredCopies {
  /** The inboxes that got messages. */
  inboxes: ReceivingInbox[];
  /** Whether deliveries were queued for the events. */
  queued: boolean;
}

/**
 * `storeMessages` and the events of the stored copies in one statement, with
 * no transaction around it: one round trip, atomic by itself. For a busy
 * listener the round trips of a batch set the pace over kept connections
 * (tests/bench/README.md: one statement per batch, 1,466 to 1,970 messages/s
 * against 1,149 to 1,579/s in three statements and a commit).
 *
 * The inboxes are known by id (the RCPT check looked them up) and locked as
 * `storeMessages` locks them; a copy whose inbox is no longer live is
 * neither stored nor announced. `events` (the outbox's `inStatement`) gives
 * the CTEs that append the events of the CTE it is given, `stored`, and
 * queue their deliveries.
 */
export async function storeWithEvents(
  db: Db,
  copies: NewCopy[],
  contents: NewContent[],
  receivedAt: Date,
  channel: string,
  events: (source: string) => { ctes: Fragment; queued: Fragment },
): Promise<StoredCopies> {
  const announce = events("stored");
  const rows = await db<(ReceivingInbox & { queued: boolean })[]>`
    WITH ${copyCte(db, copies)}, known AS (
      SELECT * FROM unnest(
        ${copies.map((m) => m.inboxId)}::text[], ${copies.map((m) => m.event.id)}::text[],
        ${copies.map((m) => m.event.type)}::text[], ${copies.map((m) => m.event.payload)}::text[],
        ${copies.map((m) => m.event.createdAt.toISOString())}::timestamptz[]
      ) WITH ORDINALITY AS k(inbox_id, event_id, type, payload, created_at, ord)
    ), locked AS MATERIALIZED (
      SELECT i.id, i.account_id, i.address FROM inboxes i
      WHERE i.id = ANY(${copies.map((m) => m.inboxId)}::text[]) AND i.expires_at > ${receivedAt}
      ORDER BY i.id
      FOR NO KEY UPDATE
    ), stored AS MATERIALIZED (
      SELECT c.*, k.inbox_id, k.event_id, k.type, k.payload, k.created_at, l.account_id
      FROM copy c JOIN known k ON k.ord = c.ord JOIN locked l ON l.id = k.inbox_id
    ), ${messageCte(db, receivedAt)}
    ${attachmentsCte(db, contents)}
    ${announce.ctes}
    -- Every locked inbox gets a message: it is the inbox of one of the copies.
    SELECT l.id, l.account_id, l.address, pg_notify(${channel}, l.id), ${announce.queued} AS queued FROM locked l`;
  return {
    inboxes: rows.map(({ id, accountId, address }) => ({ id, accountId, address })),
    queued: rows.some((r) => r.queued),
  };
}

/** The filters as SQL conditions (case-insensitive substrings, `since` inclusive). */
function filterConditions(db: Db, f: MessageFilters) {
  // strpos on lower() rather than ILIKE: no wildcard in a user's filter text needs escaping.
  return db`
    ${f.from ? db`AND strpos(lower(m.from_address), lower(${f.from})) > 0` : db``}
    ${f.subject ? db`AND strpos(lower(m.subject), lower(${f.subject})) > 0` : db``}
    ${
    f.contains
      ? db`AND (strpos(lower(coalesce(m.text_body, '')), lower(${f.contains})) > 0
          OR strpos(lower(coalesce(m.html_body, '')), lower(${f.contains})) > 0)`
      : db``
  }
    ${f.since ? db`AND m.received_at >= ${f.since}` : db``}`;
}

/** An inbox's messages matching the filters, newest first, after the cursor position. */
export async function listMessages(
  db: Db,
  inboxId: string,
  limit: number,
  after: After | undefined,
  filters: MessageFilters,
): Promise<MessageSummaryRow[]> {
  return await db<MessageSummaryRow[]>`
    SELECT ${db.unsafe(SUMMARY_COLUMNS)} FROM messages m
    WHERE m.inbox_id = ${inboxId}
      ${after ? db`AND (m.received_at, m.id) < (${after.createdAt}, ${after.id})` : db``}
      ${filterConditions(db, filters)}
    ORDER BY m.received_at DESC, m.id DESC
    LIMIT ${limit}`;
}

type StoredMessageRow = MessageSummaryRow & {
  textBody: string | null;
  htmlBody: string | null;
  headers: string;
  attachments: string;
  codes: string;
  links: string;
};

const FULL_COLUMNS = `m.id, m.inbox_id, m.from_address, m.to_address, m.subject, m.size, m.received_at,
  m.text_body, m.html_body, m.headers::text AS headers, m.attachments::text AS attachments,
  m.codes::text AS codes, m.links::text AS links`;

function fromStored(row: StoredMessageRow): MessageRow {
  // The JSON columns come back as text: the camel transform would rename keys inside jsonb.
  return {
    ...row,
    headers: JSON.parse(row.headers),
    attachments: JSON.parse(row.attachments),
    codes: JSON.parse(row.codes),
    links: JSON.parse(row.links),
  };
}

/** One message of an inbox, with bodies, headers, attachment metadata, codes and links. */
export async function findMessage(db: Db, inboxId: string, id: string): Promise<MessageRow | undefined> {
  const rows = await db<StoredMessageRow[]>`
    SELECT ${db.unsafe(FULL_COLUMNS)} FROM messages m WHERE m.id = ${id} AND m.inbox_id = ${inboxId}`;
  return rows[0] && fromStored(rows[0]);
}

/** Where a message of the inbox stands in the order the inbox's messages were stored (its `seq`). */
export async function messageSeq(db: Db, inboxId: string, id: string): Promise<string | undefined> {
  // bigint comes back as a string: compared in SQL only.
  const rows = await db<{ seq: string }[]>`SELECT seq FROM messages WHERE id = ${id} AND inbox_id = ${inboxId}`;
  return rows[0]?.seq;
}

/**
 * For a wait: whether the inbox is still one of the account's live inboxes,
 * the earliest of its messages stored after the one at `afterSeq` that
 * matches the filters, and the `seq` of its last message (where the wait
 * stands once it has looked at everything so far). One round trip.
 */
export async function firstMatching(
  db: Db,
  accountId: string,
  inboxId: string,
  now: Date,
  afterSeq: string | undefined,
  filters: MessageFilters,
): Promise<{ live: boolean; message: MessageRow | undefined; lastSeq: string | null }> {
  // messages_inbox_seq_idx: the inbox's messages in the order they were stored.
  const rows = await db<(StoredMessageRow & { live: boolean; lastSeq: string | null })[]>`
    SELECT true AS live, (SELECT max(l.seq)::text FROM messages l WHERE l.inbox_id = i.id) AS last_seq,
      ${db.unsafe(FULL_COLUMNS)}
    FROM inboxes i LEFT JOIN LATERAL (
      SELECT m.id, m.inbox_id, m.from_address, m.to_address, m.subject, m.size, m.received_at, m.text_body,
        m.html_body, m.headers, m.attachments, m.codes, m.links
      FROM messages m
      WHERE m.inbox_id = i.id
        ${afterSeq === undefined ? db`` : db`AND m.seq > ${afterSeq}::bigint`}
        ${filterConditions(db, filters)}
      ORDER BY m.seq
      LIMIT 1
    ) m ON true
    WHERE i.id = ${inboxId} AND i.account_id = ${accountId} AND i.expires_at > ${now}`;
  const row = rows[0];
  if (!row) return { live: false, message: undefined, lastSeq: null };
  const { lastSeq, live: _live, ...message } = row;
  return { live: true, message: row.id === null ? undefined : fromStored(message), lastSeq };
}

/** One wait of a group: where it stands in the inbox (a message `seq`) and its filters. */
export interface WaitPosition {
  afterSeq: string;
  filters: MessageFilters;
}

/** What a group's read found: each wait's first match, and how far the read went. */
export interface Arrivals {
  /** The inbox is still one of the account's live inboxes. */
  live: boolean;
  /** The `seq` of the last message read (null when none arrived after the waits' positions). */
  lastSeq: string | null;
  /** How many messages it read. */
  read: number;
  /** The read stopped at its bound: more messages may follow `lastSeq`. */
  more: boolean;
  /** For each wait, in the order given, the id of its earliest matching message read (null: none). */
  matches: (string | null)[];
}

/**
 * For the waits of one inbox woken together: the messages that arrived after
 * the earliest of their positions (at most `limit`), each lowercased once,
 * and for every wait the first of them after its own position that matches
 * its filters, with the same conditions as `filterConditions`. One round
 * trip for a whole group, whose cost is what arrived, not what the inbox
 * holds: 300 waits on one inbox used to read its history once each on every
 * wake-up.
 */
export async function matchArrivals(
  db: Db,
  accountId: string,
  inboxId: string,
  now: Date,
  waits: WaitPosition[],
  limit: number,
): Promise<Arrivals> {
  const column = <T>(f: (w: WaitPosition) => T) => waits.map(f);
  const rows = await db<{ live: boolean; lastSeq: string | null; fetched: number; matches: string[] }[]>`
    WITH w AS (
      SELECT * FROM unnest(
        ${column((w) => w.afterSeq)}::bigint[],
        ${column((w) => w.filters.from || null)}::text[],
        ${column((w) => w.filters.subject || null)}::text[],
        ${column((w) => w.filters.contains || null)}::text[],
        ${column((w) => w.filters.since?.toISOString() ?? null)}::timestamptz[]
      ) WITH ORDINALITY AS w(after_seq, f_from, f_subject, f_contains, f_since, ord)
    ), fresh AS MATERIALIZED (
      -- messages_inbox_seq_idx: what arrived after the earliest position, in the order it was stored.
      SELECT m.seq, m.id, m.received_at, lower(m.from_address) AS from_l, lower(m.subject) AS subject_l,
        lower(coalesce(m.text_body, '')) AS text_l, lower(coalesce(m.html_body, '')) AS html_l
      FROM messages m
      WHERE m.inbox_id = ${inboxId} AND m.seq > (SELECT min(after_seq) FROM w)
      ORDER BY m.seq
      LIMIT ${limit}
    )
    SELECT
      EXISTS (
        SELECT 1 FROM inboxes i WHERE i.id = ${inboxId} AND i.account_id = ${accountId} AND i.expires_at > ${now}
      ) AS live,
      (SELECT max(f.seq)::text FROM fresh f) AS last_seq,
      (SELECT count(*)::int FROM fresh) AS fetched,
      -- '' for no match: the driver reads a NULL inside an array as the text "NULL".
      ARRAY(
        SELECT coalesce((
          SELECT f.id FROM fresh f
          WHERE f.seq > w.after_seq
            AND (w.f_from IS NULL OR strpos(f.from_l, lower(w.f_from)) > 0)
            AND (w.f_subject IS NULL OR strpos(f.subject_l, lower(w.f_subject)) > 0)
            AND (w.f_contains IS NULL OR strpos(f.text_l, lower(w.f_contains)) > 0
              OR strpos(f.html_l, lower(w.f_contains)) > 0)
            AND (w.f_since IS NULL OR f.received_at >= w.f_since)
          ORDER BY f.seq
          LIMIT 1
        ), '')
        FROM w ORDER BY w.ord
      ) AS matches`;
  const row = rows[0]!;
  return {
    live: row.live,
    lastSeq: row.lastSeq,
    read: row.fetched,
    more: row.fetched === limit,
    matches: row.matches.map((id) => id === "" ? null : id),
  };
}

/** The bytes a message arrived as; undefined when there is no such message or it predates raw storage. */
export async function findRaw(
  db: Db,
  inboxId: string,
  id: string,
): Promise<Uint8Array<ArrayBuffer> | null | undefined> {
  const rows = await db<{ raw: Uint8Array<ArrayBuffer> | null }[]>`
    SELECT raw FROM messages WHERE id = ${id} AND inbox_id = ${inboxId}`;
  return rows[0]?.raw;
}

/**
 * One attachment of one message of an inbox, its metadata (from the message's
 * list) with its contents, in one query; `message: false` when the inbox has
 * no such message, no `attachment` when the message has no such attachment.
 * The message's bodies are not read.
 */
export async function findAttachment(
  db: Db,
  inboxId: string,
  messageId: string,
  attachmentId: string,
): Promise<{ message: boolean; attachment?: { meta: AttachmentMeta; content: Uint8Array<ArrayBuffer> } }> {
  const rows = await db<{ meta: string | null; content: Uint8Array<ArrayBuffer> | null }[]>`
    SELECT (SELECT x::text FROM jsonb_array_elements(m.attachments) AS x WHERE x->>'id' = a.id) AS meta, a.content
    FROM messages m LEFT JOIN attachments a ON a.message_id = m.id AND a.id = ${attachmentId}
    WHERE m.id = ${messageId} AND m.inbox_id = ${inboxId}`;
  const row = rows[0];
  if (!row) return { message: false };
  if (row.meta === null || row.content === null) return { message: true };
  // Text, not jsonb: the driver's camel transform would rename keys inside it.
  return { message: true, attachment: { meta: JSON.parse(row.meta), content: row.content } };
}

/** Deletes one message of an inbox (its attachments go with it by cascade); false when there is none. */
export async function deleteMessage(db: Db, inboxId: string, id: string): Promise<boolean> {
  const rows = await db`DELETE FROM messages WHERE id = ${id} AND inbox_id = ${inboxId} RETURNING id`;
  return rows.length > 0;
}
