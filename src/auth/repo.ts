/** SQL of sessions. */
import type { Db } from "../db/client.ts";
import type { AccountRow } from "../accounts/schemas.ts";

/** Stores a session by the hash of its token. */
export async function insertSession(
  db: Db,
  s: { tokenHash: string; accountId: string; createdAt: Date; expiresAt: Date },
): Promise<void> {
  await db`
    INSERT INTO sessions (token_hash, account_id, created_at, expires_at)
    VALUES (${s.tokenHash}, ${s.accountId}, ${s.createdAt}, ${s.expiresAt})`;
}

/** The account of a live session and when the session expires, in one round trip. */
export async function findSessionAccount(
  db: Db,
  tokenHash: string,
  now: Date,
): Promise<{ account: AccountRow; expiresAt: Date } | undefined> {
  const rows = await db<(AccountRow & { sessionExpiresAt: Date })[]>`
    SELECT a.id, a.email, a.plan, a.created_at, s.expires_at AS session_expires_at
    FROM sessions s JOIN accounts a ON a.id = s.account_id
    WHERE s.token_hash = ${tokenHash} AND s.expires_at > ${now}`;
  const row = rows[0];
  if (!row) return undefined;
  const { sessionExpiresAt, ...account } = row;
  return { account, expiresAt: sessionExpiresAt };
}

/** Ends a session; false when there was none. */
export async function deleteSession(db: Db, tokenHash: string): Promise<boolean> {
  const rows = await db`DELETE FROM sessions WHERE token_hash = ${tokenHash} RETURNING 1`;
  return rows.length > 0;
}

/** Which of these sessions (by token hash) are still live. */
export async function liveSessionHashes(db: Db, tokenHashes: string[], now: Date): Promise<string[]> {
  const rows = await db<{ tokenHash: string }[]>`
    SELECT token_hash FROM sessions WHERE token_hash = ANY(${tokenHashes}::text[]) AND expires_at > ${now}`;
  return rows.map((r) => r.tokenHash);
}

/** Removes expired sessions (cron); returns how many. */
export async function purgeExpiredSessions(db: Db, now: Date): Promise<number> {
  const rows = await db`DELETE FROM sessions WHERE expires_at <= ${now} RETURNING 1`;
  return rows.length;
}
