/**
 * SQL of messages and their attachments. A message is only ever read through
 * its inbox (`inbox_id`), and the caller has checked that the inbox is one of
 * the account's live inboxes, except where a statement checks it itself.
 */
import type { Db, Fragment } from "../db/client.ts";
import type { After } from "../inboxes/repo.ts";
import type { AttachmentMeta, Link, MessageFilters, MessageRow, MessageSummaryRow } from "./schemas.ts";

const SUMMARY_COLUMNS = "id, inbox_id, from_address, to_address, subject, size, received_at";

/** A copy of a received message, as it is stored for the inbox the RCPT check found for its recipient. */
export interface NewCopy {
  id: string;
  /** The inbox the RCPT check found; the copy is stored only if it is still live. */
  inboxId: string;
  /** The recipient as the message keeps it (its inbox's address, with a tag if it had one). */
  to: string;
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

/** An attachment's contents, for the copy it belongs to. */
export interface NewContent {
  id: string;
  messageId: string;
  content: Uint8Array;
}

/** An inbox that got copies of a batch. */
export interface ReceivingInbox {
  id: string;
  accountId: string;
  address: string;
}

/**
 * The change that stores a batch of copies, for the outbox to run with
 * their `message.received` events in one statement (deliveries/outbox.ts
 * `statement`): one round trip, atomic without a transaction. For a busy
 * listener the round trips of a batch set the pace over kept connections
 * (one statement per batch: 1,466 to 1,970 messages/s against 1,149 to
 * 1,579/s in three statements and a commit, 8 kept connections).
 *
 * - `locked`: the copies' inboxes, by id, still live at `receivedAt`,
 *   locked (NO KEY UPDATE, in id order, so that two batches sharing inboxes
 *   cannot deadlock; a DELETE waits for the commit). A copy whose inbox is
 *   gone is neither stored nor announced.
 * - `message`: the rows, which take their `seq` (the column's default) in
 *   the order given. A second batch for the same inbox waits at its lock
 *   until the first commits, so seq follows commit order, and a wait's
 *   `after` cursor never skips a message committed later with a smaller seq.
 * - `attachment`: the contents of the copies stored.
 *
 * `written` gives the ids of the copies stored (their events' `ref`), and
 * `select` one row per inbox that got copies, with the NOTIFY that wakes its
 * waiters on every instance.
 */
export function storeCopiesChange(
  db: Db,
  copies: NewCopy[],
  contents: NewContent[],
  receivedAt: Date,
  channel: string,
): { ctes: Fragment; written: Fragment; select: Fragment } {
  // Columns travel as arrays; byte strings as base64 text (the driver sends no bytea arrays).
  const json = (f: (m: NewCopy) => unknown) => copies.map((m) => JSON.stringify(f(m)));
  return {
    ctes: db`copy AS (
      SELECT * FROM unnest(
        ${copies.map((m) => m.id)}::text[], ${copies.map((m) => m.inboxId)}::text[],
        ${copies.map((m) => m.to)}::text[], ${copies.map((m) => m.from)}::text[],
        ${copies.map((m) => m.subject)}::text[], ${copies.map((m) => m.text)}::text[],
        ${copies.map((m) => m.html)}::text[], ${json((m) => m.headers)}::text[], ${json((m) => m.attachments)}::text[],
        ${json((m) => m.codes)}::text[], ${json((m) => m.links)}::text[], ${copies.map((m) => m.size)}::integer[],
        ${copies.map((m) => m.raw.toBase64())}::text[]
      ) WITH ORDINALITY AS c(id, inbox_id, to_address, from_address, subject, text_body, html_body, headers, attachments,
        codes, links, size, raw, ord)
    ), locked AS MATERIALIZED (
      SELECT i.id, i.account_id, i.address FROM inboxes i
      WHERE i.id IN (SELECT c.inbox_id FROM copy c) AND i.expires_at > ${receivedAt}
      ORDER BY i.id
      FOR NO KEY UPDATE
    ), message AS (
      INSERT INTO messages (id, inbox_id, from_address, to_address, subject, text_body, html_body, headers,
        attachments, codes, links, size, raw, received_at)
      SELECT c.id, c.inbox_id, c.from_address, c.to_address, c.subject, c.text_body, c.html_body, c.headers::jsonb,
        c.attachments::jsonb, c.codes::jsonb, c.links::jsonb, c.size, decode(c.raw, 'base64'), ${receivedAt}
      FROM copy c JOIN locked l ON l.id = c.inbox_id
      ORDER BY c.ord
      RETURNING id
    ), attachment AS (
      INSERT INTO attachments (id, message_id, content)
      SELECT a.id, a.message_id, decode(a.content, 'base64')
      FROM unnest(
        ${contents.map((c) => c.id)}::text[], ${contents.map((c) => c.messageId)}::text[],
        ${contents.map((c) => c.content.toBase64())}::text[]
      ) AS a(id, message_id, content)
      WHERE a.message_id IN (SELECT id FROM message)
    )`,
    written: db`SELECT id FROM message`,
    // Every locked inbox gets a copy: it is the inbox of one of them.
    select: db`l.id, l.account_id, l.address, pg_notify(${channel}, l.id) AS notified FROM locked l`,
  };
}

/** The filters as SQL conditions (case-insensitive substrings, `since` inclusive). */
function filterConditions(db: Db, f: MessageFilters) {
  // strpos on lower() rather than ILIKE: no wildcard in a user's filter text needs escaping.
  return db`
    ${f.from ? db`AND strpos(lower(m.from_address), lower(${f.from})) > 0` : db``}
    ${f.to ? db`AND strpos(lower(m.to_address), lower(${f.to})) > 0` : db``}
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
        ${column((w) => w.filters.to || null)}::text[],
        ${column((w) => w.filters.subject || null)}::text[],
        ${column((w) => w.filters.contains || null)}::text[],
        ${column((w) => w.filters.since?.toISOString() ?? null)}::timestamptz[]
      ) WITH ORDINALITY AS w(after_seq, f_from, f_to, f_subject, f_contains, f_since, ord)
    ), fresh AS MATERIALIZED (
      -- messages_inbox_seq_idx: what arrived after the earliest position, in the order it was stored.
      SELECT m.seq, m.id, m.received_at, lower(m.from_address) AS from_l, lower(m.to_address) AS to_l,
        lower(m.subject) AS subject_l,
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
            AND (w.f_to IS NULL OR strpos(f.to_l, lower(w.f_to)) > 0)
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
