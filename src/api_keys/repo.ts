/** SQL of API keys. */
import type { Db } from "../db/client.ts";
import type { Plan } from "../accounts/schemas.ts";

export interface ApiKeyRow {
  id: string;
  name: string;
  keyPrefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  /** Null: every scope. */
  scopes: string[] | null;
  /** Null: every inbox of the account. */
  inboxIds: string[] | null;
  expiresAt: Date | null;
}

const KEY_COLUMNS = "id, name, key_prefix, created_at, last_used_at, scopes, inbox_ids, expires_at";

/** Inserts a key (only its hash and display prefix). */
export async function insertApiKey(
  db: Db,
  k: {
    id: string;
    accountId: string;
    name: string;
    keyPrefix: string;
    keyHash: string;
    createdAt: Date;
    scopes: string[] | null;
    inboxIds: string[] | null;
    expiresAt: Date | null;
  },
): Promise<ApiKeyRow> {
  const rows = await db<ApiKeyRow[]>`
    INSERT INTO api_keys (id, account_id, name, key_prefix, key_hash, created_at, scopes, inbox_ids, expires_at)
    VALUES (${k.id}, ${k.accountId}, ${k.name}, ${k.keyPrefix}, ${k.keyHash}, ${k.createdAt}, ${k.scopes}::text[],
      ${k.inboxIds}::text[], ${k.expiresAt})
    RETURNING ${db.unsafe(KEY_COLUMNS)}`;
  return rows[0]!;
}

/** How many keys of the account count towards its limit: those not expired at `now`. */
export async function countApiKeys(db: Db, accountId: string, now: Date): Promise<number> {
  const rows = await db<{ n: number }[]>`
    SELECT count(*)::int AS n FROM api_keys
    WHERE account_id = ${accountId} AND (expires_at IS NULL OR expires_at > ${now})`;
  return rows[0]!.n;
}

/** The account's keys, oldest first (expired ones too, until they are removed). */
export async function listApiKeys(db: Db, accountId: string): Promise<ApiKeyRow[]> {
  return await db<ApiKeyRow[]>`
    SELECT ${db.unsafe(KEY_COLUMNS)}
    FROM api_keys WHERE account_id = ${accountId}
    ORDER BY created_at, id`;
}

/** Removes keys that expired before `before` (the sweep keeps them listed a while); returns how many. */
export async function purgeExpiredKeys(db: Db, before: Date): Promise<number> {
  const rows = await db`DELETE FROM api_keys WHERE expires_at < ${before} RETURNING 1`;
  return rows.length;
}

/** Which of `ids` are inboxes of the account live at `now`. */
export async function liveInboxIdsOf(db: Db, accountId: string, ids: string[], now: Date): Promise<string[]> {
  const rows = await db<{ id: string }[]>`
    SELECT id FROM inboxes WHERE account_id = ${accountId} AND id = ANY(${ids}::text[]) AND expires_at > ${now}`;
  return rows.map((r) => r.id);
}

/** Deletes one of the account's keys; false when it has no such key. */
export async function deleteApiKey(db: Db, accountId: string, id: string): Promise<boolean> {
  const rows = await db`DELETE FROM api_keys WHERE id = ${id} AND account_id = ${accountId} RETURNING id`;
  return rows.length > 0;
}

export interface KeyOwner {
  keyId: string;
  lastUsedAt: Date | null;
  accountId: string;
  email: string;
  plan: Plan;
  /** Null: every scope. */
  scopes: string[] | null;
  /** Null: every inbox. */
  inboxIds: string[] | null;
  /** Null: never. An expired key is found, so that its refusal can say it expired. */
  expiresAt: Date | null;
}

/** The key with that hash and its account, in one round trip. */
export async function findKeyOwner(db: Db, keyHash: string): Promise<KeyOwner | undefined> {
  const rows = await db<KeyOwner[]>`
    SELECT k.id AS key_id, k.last_used_at, a.id AS account_id, a.email, a.plan, k.scopes, k.inbox_ids, k.expires_at
    FROM api_keys k JOIN accounts a ON a.id = k.account_id
    WHERE k.key_hash = ${keyHash}`;
  return rows[0];
}

/** Records a use, unless one was recorded less than `minGapMs` ago. */
export async function touchLastUsed(db: Db, id: string, now: Date, minGapMs: number): Promise<void> {
  // The condition makes "at most once a minute" hold across instances, not
  // just inside one process.
  const threshold = new Date(now.getTime() - minGapMs);
  await db`
    UPDATE api_keys SET last_used_at = ${now}
    WHERE id = ${id} AND (last_used_at IS NULL OR last_used_at <= ${threshold})`;
}

/** Which of these key ids are still live at `now`: not revoked, not expired. */
export async function liveKeyIds(db: Db, ids: string[], now: Date): Promise<string[]> {
  const rows = await db<{ id: string }[]>`
    SELECT id FROM api_keys WHERE id = ANY(${ids}::text[]) AND (expires_at IS NULL OR expires_at > ${now})`;
  return rows.map((r) => r.id);
}
