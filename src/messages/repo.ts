/**
 * SQL of messages and their attachments. A message is only ever read through
 * its inbox (`inbox_id`), and the caller has checked that the inbox is one of
 * the account's live inboxes, except where a statement checks it itself.
 */
import type { Db, Tx } from "../db/client.ts";
import type { After } from "../inboxes/repo.ts";
import type { AttachmentMeta, Link, MessageFilters, MessageRow, MessageSummaryRow } from "./schemas.ts";

const SUMMARY_COLUMNS = "id, inbox_id, from_address, to_address, subject, size, received_at";

/**
 * Stores a received message with its raw bytes and attachment contents, gives
 * it its place in the inbox's order, and queues the NOTIFY that wakes the
 * inbox's waiters on every instance: one statement, the last of the receiving
 * transaction before its commit.
 *
 * The order: the inbox row is locked (NO KEY UPDATE, which the other
 * receivers' KEY SHARE does not block) and the message takes the next `seq`.
 * A second message for the same inbox waits at this lock until the first
 * commits, so seq follows commit order and a follower's `after` cursor never
 * skips a message committed later with a smaller seq. Only this statement and
 * the commit run one at a time per inbox, not the whole ingestion.
 */
export async function storeMessage(
  tx: Tx,
  m: {
    id: string;
    inboxId: string;
    from: string;
    to: string;
    subject: string;
    text: string | null;
    html: string | null;
    headers: Record<string, string>;
    attachments: AttachmentMeta[];
    codes: string[];
    links: Link[];
    size: number;
    raw: Uint8Array;
    receivedAt: Date;
  },
  contents: { id: string; content: Uint8Array }[],
  channel: string,
): Promise<void> {
  // The attachments' foreign key is checked at the end of the statement, when the message row is there.
  // Their contents travel as base64 text: the driver sends no bytea arrays.
  await tx`
    WITH locked AS (SELECT id FROM inboxes WHERE id = ${m.inboxId} FOR NO KEY UPDATE),
    message AS (
      INSERT INTO messages (id, inbox_id, from_address, to_address, subject, text_body, html_body, headers,
        attachments, codes, links, size, raw, received_at, seq)
      SELECT ${m.id}, ${m.inboxId}, ${m.from}, ${m.to}, ${m.subject}, ${m.text}, ${m.html},
        ${tx.json(m.headers)}, ${tx.json(m.attachments)}, ${tx.json(m.codes)}, ${tx.json(m.links)}, ${m.size},
        ${m.raw}, ${m.receivedAt}, nextval(pg_get_serial_sequence('messages', 'seq'))
      FROM locked
      RETURNING id
    ), attachment AS (
      INSERT INTO attachments (id, message_id, content)
      SELECT a.id, message.id, decode(a.content, 'base64')
      FROM message, unnest(${contents.map((c) => c.id)}::text[], ${contents.map((c) => c.content.toBase64())}::text[])
        AS a(id, content)
    )
    SELECT pg_notify(${channel}, ${m.inboxId}) FROM message`;
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
 * and the earliest of its messages stored after the one at `afterSeq` that
 * matches the filters. One round trip, so a woken waiter learns both at once.
 */
export async function firstMatching(
  db: Db,
  accountId: string,
  inboxId: string,
  now: Date,
  afterSeq: string | undefined,
  filters: MessageFilters,
): Promise<{ live: boolean; message: MessageRow | undefined }> {
  // messages_inbox_seq_idx: the inbox's messages in the order they were stored.
  const rows = await db<(StoredMessageRow & { live: boolean })[]>`
    SELECT true AS live, ${db.unsafe(FULL_COLUMNS)}
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
  if (!row) return { live: false, message: undefined };
  return { live: true, message: row.id === null ? undefined : fromStored(row) };
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

/** The contents of one attachment of one message of an inbox. */
export async function findAttachmentContent(
  db: Db,
  inboxId: string,
  messageId: string,
  attachmentId: string,
): Promise<Uint8Array<ArrayBuffer> | undefined> {
  const rows = await db<{ content: Uint8Array<ArrayBuffer> }[]>`
    SELECT a.content FROM attachments a JOIN messages m ON m.id = a.message_id
    WHERE a.id = ${attachmentId} AND a.message_id = ${messageId} AND m.inbox_id = ${inboxId}`;
  return rows[0]?.content;
}

/** Deletes one message of an inbox (its attachments go with it by cascade); false when there is none. */
export async function deleteMessage(db: Db, inboxId: string, id: string): Promise<boolean> {
  const rows = await db`DELETE FROM messages WHERE id = ${id} AND inbox_id = ${inboxId} RETURNING id`;
  return rows.length > 0;
}
