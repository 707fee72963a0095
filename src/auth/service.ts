/** Sessions: register, log in, log out, and resolve a session cookie. */
import type { Db } from "../db/client.ts";
import { ApiError } from "../errors.ts";
import { randomToken, sha256Hex } from "../shared/crypto.ts";
import type { Clock } from "../shared/clock.ts";
import { DUMMY_HASH, verifyPassword } from "../accounts/passwords.ts";
import { findAccountByEmail } from "../accounts/repo.ts";
import type { AccountRow } from "../accounts/schemas.ts";
import * as repo from "./repo.ts";

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

/** The account behind a session token, if the session is live. */
export async function resolveSession(db: Db, clock: Clock, token: string): Promise<AccountRow | undefined> {
  return await repo.findSessionAccount(db, sha256Hex(token), clock.now());
}

/** Ends the session of a token (a no-op for unknown tokens). */
export async function endSession(db: Db, token: string): Promise<void> {
  await repo.deleteSession(db, sha256Hex(token));
}
