/**
 * SQL of inboxes. "Live" always means `expires_at > now` with the
 * caller's clock: an inbox stops existing for the API and for SMTP the moment
 * it expires, whether or not the sweep has removed it yet.
 */
import type { Db, Tx } from "../db/client.ts";
import type { InboxRow } from "./schemas.ts";

const INBOX_COLUMNS = "id, account_id, address, created_at, expires_at";

/** A page position: the (time, id) of the last row seen. */
export interface After {
  createdAt: Date;
  id: string;
}

/**
 * Inserts an inbox unless its address is taken; returns it with the number of
 * live inboxes the account holds now, the new one included. One statement:
 * inbox creation runs under its account's lock, so each round trip saved is
 * one the account's other creations do not wait for.
 */
export async function insertInbox(db: Db, i: InboxRow): Promise<{ inbox: InboxRow; live: number } | undefined> {
  // DO NOTHING instead of an error: a concurrent creation of the same address
  // waits for the first to commit and then simply gets no row back. The count
  // reads the statement's snapshot, which does not hold the new row yet.
  const rows = await db<(InboxRow & { live: number })[]>`
    WITH inserted AS (
      INSERT INTO inboxes (id, account_id, address, created_at, expires_at)
      VALUES (${i.id}, ${i.accountId}, ${i.address}, ${i.createdAt}, ${i.expiresAt})
      ON CONFLICT ON CONSTRAINT inboxes_address_key DO NOTHING
      RETURNING ${db.unsafe(INBOX_COLUMNS)}
    )
    SELECT inserted.*, 1 + (
      SELECT count(*)::int FROM inboxes WHERE account_id = ${i.accountId} AND expires_at > ${i.createdAt}
    ) AS live
    FROM inserted`;
  const row = rows[0];
  if (!row) return undefined;
  const { live, ...inbox } = row;
  return { inbox, live };
}

/** Deletes the expired inbox that still holds an address (with its messages); returns it, if any. */
export async function deleteExpiredByAddress(db: Db, address: string, now: Date): Promise<InboxRow[]> {
  // A row a sweep is expiring right now is locked: this waits, then finds it
  // gone, so its inbox.expired is emitted once, by whoever deleted it.
  return await db<InboxRow[]>`
    DELETE FROM inboxes WHERE address = ${address} AND expires_at <= ${now}
    RETURNING ${db.unsafe(INBOX_COLUMNS)}`;
}

/** One of the account's live inboxes. */
export async function findLiveInbox(db: Db, accountId: string, id: string, now: Date): Promise<InboxRow | undefined> {
  const rows = await db<InboxRow[]>`
    SELECT ${db.unsafe(INBOX_COLUMNS)} FROM inboxes
    WHERE id = ${id} AND account_id = ${accountId} AND expires_at > ${now}`;
  return rows[0];
}

/** The account's live inboxes, newest first, after the cursor position. */
export async function listLiveInboxes(
  db: Db,
  accountId: string,
  now: Date,
  limit: number,
  after: After | undefined,
  /** Only these (a restricted key's); null: all. */
  inboxIds: readonly string[] | null,
): Promise<InboxRow[]> {
  return await db<InboxRow[]>`
    SELECT ${db.unsafe(INBOX_COLUMNS)} FROM inboxes
    WHERE account_id = ${accountId} AND expires_at > ${now}
      ${inboxIds === null ? db`` : db`AND id = ANY(${inboxIds as string[]}::text[])`}
      ${after ? db`AND (created_at, id) < (${after.createdAt}, ${after.id})` : db``}
    ORDER BY created_at DESC, id DESC
    LIMIT ${limit}`;
}

/** Deletes one of the account's live inboxes with its messages; false when there is none. */
export async function deleteLiveInbox(db: Db, accountId: string, id: string, now: Date): Promise<boolean> {
  // An expired inbox is left to the sweep, which owes it an inbox.expired event.
  const rows = await db`
    DELETE FROM inboxes WHERE id = ${id} AND account_id = ${accountId} AND expires_at > ${now}
    RETURNING id`;
  return rows.length > 0;
}

/** Which of these addresses (lowercase) are those of live inboxes: each one's inbox, account and expiry. */
export async function liveAddresses(
  db: Db,
  addresses: string[],
  now: Date,
): Promise<{ address: string; id: string; accountId: string; expiresAt: Date }[]> {
  // inboxes_address_key: one index probe per address.
  return await db<{ address: string; id: string; accountId: string; expiresAt: Date }[]>`
    SELECT address, id, account_id, expires_at FROM inboxes
    WHERE address = ANY(${addresses}::text[]) AND expires_at > ${now}`;
}

/** Up to `limit` expired inboxes, locked for this transaction; rows another sweeper holds are skipped. */
export async function claimExpiredInboxes(tx: Tx, now: Date, limit: number): Promise<InboxRow[]> {
  return await tx<InboxRow[]>`
    SELECT ${tx.unsafe(INBOX_COLUMNS)} FROM inboxes
    WHERE expires_at <= ${now}
    ORDER BY expires_at, id
    LIMIT ${limit}
    FOR UPDATE SKIP LOCKED`;
}

/** Deletes inboxes (their messages go with them by cascade); returns the rows this deleted. */
export async function deleteInboxes(tx: Tx, ids: string[]): Promise<InboxRow[]> {
  return await tx<InboxRow[]>`DELETE FROM inboxes WHERE id = ANY(${ids}) RETURNING ${tx.unsafe(INBOX_COLUMNS)}`;
}
