/** SQL of accounts. */
import type { Db } from "../db/client.ts";
import type { AccountRow, Plan } from "./schemas.ts";

/** Inserts an account; returns undefined when the email is taken. */
export async function insertAccount(
  db: Db,
  a: { id: string; email: string; passwordHash: string; plan: Plan; createdAt: Date },
): Promise<AccountRow | undefined> {
  // ON CONFLICT instead of a prior SELECT: two registrations racing for one
  // email cannot both win.
  const rows = await db<AccountRow[]>`
    INSERT INTO accounts (id, email, password_hash, plan, created_at)
    VALUES (${a.id}, ${a.email}, ${a.passwordHash}, ${a.plan}, ${a.createdAt})
    ON CONFLICT DO NOTHING
    RETURNING id, email, plan, created_at`;
  return rows[0];
}

/** The account and its password hash, by email (case-insensitive). */
export async function findAccountByEmail(
  db: Db,
  email: string,
): Promise<(AccountRow & { passwordHash: string }) | undefined> {
  const rows = await db<(AccountRow & { passwordHash: string })[]>`
    SELECT id, email, plan, created_at, password_hash FROM accounts WHERE lower(email) = lower(${email})`;
  return rows[0];
}

/** The account by id. */
export async function findAccountById(db: Db, id: string): Promise<AccountRow | undefined> {
  const rows = await db<AccountRow[]>`SELECT id, email, plan, created_at FROM accounts WHERE id = ${id}`;
  return rows[0];
}

/** Sets the plan; returns the updated account, or undefined when there is none. */
export async function updatePlan(db: Db, id: string, plan: Plan): Promise<AccountRow | undefined> {
  const rows = await db<AccountRow[]>`
    UPDATE accounts SET plan = ${plan} WHERE id = ${id} RETURNING id, email, plan, created_at`;
  return rows[0];
}

/** Locks the account row for the rest of the transaction. */
export async function lockAccount(tx: Db, id: string): Promise<void> {
  // Serialises "count then insert" checks (10 keys, 10 webhooks) per account
  // across every instance.
  await tx`SELECT 1 FROM accounts WHERE id = ${id} FOR UPDATE`;
}

/** Locks the account row for the rest of the transaction and returns its plan (undefined: no such account). */
export async function lockAccountPlan(tx: Db, id: string): Promise<Plan | undefined> {
  // Read under the lock: a plan change made a moment ago is what counts.
  const rows = await tx<{ plan: Plan }[]>`SELECT plan FROM accounts WHERE id = ${id} FOR UPDATE`;
  return rows[0]?.plan;
}
