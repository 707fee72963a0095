/** Sessions: register, log in, log out, and resolve a session cookie. */
import type { Db, Sql } from "../db/client.ts";
import { ApiError } from "../errors.ts";
import { randomToken, sha256Hex } from "../shared/crypto.ts";
import type { Clock } from "../shared/clock.ts";
import { DUMMY_HASH, verifyPassword } from "../accounts/passwords.ts";
import { findAccountByEmail } from "../accounts/repo.ts";
import type { AccountRow } from "../accounts/schemas.ts";
import * as repo from "./repo.ts";
import type { NotificationHub } from "../notifications/hub.ts";
import { notify } from "../notifications/repo.ts";
import { liveKeyIds } from "../api_keys/repo.ts";
import { AUTH_CHANNEL, type Credential, sessionCredentialId } from "./revocations.ts";

/** Opens a session for the account; returns the cookie token. */
export async function startSession(db: Db, clock: Clock, accountId: string, ttlDays: number): Promise<string> {
  const token = randomToken(32);
  const now = clock.now();
  await repo.insertSession(db, {
    tokenHash: sha256Hex(token),
    accountId,
    createdAt: now,
    expiresAt: new Date(now.getTime() + ttlDays * 86_400_000),
  });
  return token;
}

/** Checks credentials; 401 INVALID_CREDENTIALS without saying which part was wrong. */
export async function checkCredentials(db: Db, email: string, password: string): Promise<AccountRow> {
  const found = await findAccountByEmail(db, email);
  // Verify against a dummy hash for unknown emails so timing does not reveal them.
  const ok = await verifyPassword(password, found?.passwordHash ?? DUMMY_HASH);
  if (!found || !ok) throw new ApiError(401, "INVALID_CREDENTIALS", "Invalid email or password");
  const { passwordHash: _omit, ...account } = found;
  return account;
}

/** The account behind a session token, if the session is live, and the session as a credential. */
export async function resolveSession(
  db: Db,
  clock: Clock,
  token: string,
): Promise<{ account: AccountRow; credential: Credential } | undefined> {
  const hash = sha256Hex(token);
  const found = await repo.findSessionAccount(db, hash, clock.now());
  if (!found) return undefined;
  return { account: found.account, credential: { id: sessionCredentialId(hash), expiresAt: found.expiresAt } };
}

/**
 * Ends the session of a token (a no-op for unknown tokens), and the requests
 * still open with it on every instance (auth/revocations.ts).
 */
export async function endSession(
  deps: { sql: Sql; hub: Pick<NotificationHub, "publishLocal"> },
  token: string,
): Promise<void> {
  const id = sessionCredentialId(sha256Hex(token));
  const ended = await deps.sql.begin(async (tx) => {
    if (!await repo.deleteSession(tx, sha256Hex(token))) return false;
    await notify(tx, AUTH_CHANNEL, id);
    return true;
  });
  if (ended) deps.hub.publishLocal(AUTH_CHANNEL, id);
}

/**
 * Which of these credential ids (API key ids, `session:` ids) are still
 * valid: the keys neither revoked nor expired, the sessions neither ended
 * nor expired.
 */
export async function stillValidCredentials(db: Db, clock: Clock, ids: string[]): Promise<Set<string>> {
  const sessions = ids.filter((id) => id.startsWith("session:")).map((id) => id.slice("session:".length));
  const keys = ids.filter((id) => !id.startsWith("session:"));
  const [liveKeys, liveSessions] = await Promise.all([
    keys.length > 0 ? liveKeyIds(db, keys, clock.now()) : [],
    sessions.length > 0 ? repo.liveSessionHashes(db, sessions, clock.now()) : [],
  ]);
  return new Set([...liveKeys, ...liveSessions.map(sessionCredentialId)]);
}
