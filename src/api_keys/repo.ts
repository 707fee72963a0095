/** SQL of API keys. */
import type { Db } from "../db/client.ts";
import type { Plan } from "../accounts/schemas.ts";

export interface ApiKeyRow {
  id: string;
  name: string;
  keyPrefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}

/** Inserts a key (only its hash and display prefix). */
export async function insertApiKey(
  db: Db,
  k: { id: string; accountId: string; name: string; keyPrefix: string; keyHash: string; createdAt: Date },
): Promise<ApiKeyRow> {
  const rows = await db<ApiKeyRow[]>`
    INSERT INTO api_keys (id, account_id, name, key_prefix, key_hash, created_at)
    VALUES (${k.id}, ${k.accountId}, ${k.name}, ${k.keyPrefix}, ${k.keyHash}, ${k.createdAt})
    RETURNING id, name, key_prefix, created_at, last_used_at`;
  return rows[0]!;
}

/** How many keys the account has. */
export async function countApiKeys(db: Db, accountId: string): Promise<number> {
  const rows = await db<{ n: number }[]>`SELECT count(*)::int AS n FROM api_keys WHERE account_id = ${accountId}`;
  return rows[0]!.n;
}

/** The account's keys, oldest first. */
export async function listApiKeys(db: Db, accountId: string): Promise<ApiKeyRow[]> {
  return await db<ApiKeyRow[]>`
    SELECT id, name, key_prefix, created_at, last_used_at
    FROM api_keys WHERE account_id = ${accountId}
    ORDER BY created_at, id`;
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
}

/** The key with that hash and its account, in one round trip. */
export async function findKeyOwner(db: Db, keyHash: string): Promise<KeyOwner | undefined> {
  const rows = await db<KeyOwner[]>`
    SELECT k.id AS key_id, k.last_used_at, a.id AS account_id, a.email, a.plan
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

/** Which of these key ids still exist (were not revoked). */
export async function existingKeyIds(db: Db, ids: string[]): Promise<string[]> {
  const rows = await db<{ id: string }[]>`SELECT id FROM api_keys WHERE id = ANY(${ids}::text[])`;
  return rows.map((r) => r.id);
}
