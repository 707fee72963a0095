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

/** The account of a live session, in one round trip. */
export async function findSessionAccount(db: Db, tokenHash: string, now: Date): Promise<AccountRow | undefined> {
  const rows = await db<AccountRow[]>`
    SELECT a.id, a.email, a.plan, a.created_at
    FROM sessions s JOIN accounts a ON a.id = s.account_id
    WHERE s.token_hash = ${tokenHash} AND s.expires_at > ${now}`;
  return rows[0];
}

/** Ends a session. */
export async function deleteSession(db: Db, tokenHash: string): Promise<void> {
  await db`DELETE FROM sessions WHERE token_hash = ${tokenHash}`;
}

/** Removes expired sessions (cron); returns how many. */
export async function purgeExpiredSessions(db: Db, now: Date): Promise<number> {
  const rows = await db`DELETE FROM sessions WHERE expires_at <= ${now} RETURNING 1`;
  return rows.length;
}
