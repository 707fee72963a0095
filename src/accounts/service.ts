/** Account rules shared by self-registration, the operator API and the CLI. */
import type { Db } from "../db/client.ts";
import { ApiError } from "../errors.ts";
import { newId } from "../shared/ids.ts";
import type { Clock } from "../shared/clock.ts";
import { hashPassword } from "./passwords.ts";
import * as repo from "./repo.ts";
import type { AccountRow, Plan } from "./schemas.ts";

/** Creates an account; 400 EMAIL_TAKEN when the email is in use. */
export async function createAccount(
  db: Db,
  clock: Clock,
  input: { email: string; password: string; plan: Plan },
): Promise<AccountRow> {
  const now = clock.now();
  const account = await repo.insertAccount(db, {
    id: newId("acc", now.getTime()),
    email: input.email.trim(),
    passwordHash: await hashPassword(input.password),
    plan: input.plan,
    createdAt: now,
  });
  if (!account) throw new ApiError(400, "EMAIL_TAKEN", "An account with this email already exists");
  return account;
}

/** The account with this email (compared ignoring case), without its password hash. */
export async function findAccountByEmail(db: Db, email: string): Promise<AccountRow | undefined> {
  const found = await repo.findAccountByEmail(db, email);
  // Rebuilt field by field so the password hash can never reach a response.
  return found && { id: found.id, email: found.email, plan: found.plan, createdAt: found.createdAt };
}

/** Sets an account's plan; 404 ACCOUNT_NOT_FOUND when there is no such account. */
export async function setPlan(db: Db, id: string, plan: Plan): Promise<AccountRow> {
  const account = await repo.updatePlan(db, id, plan);
  if (!account) throw new ApiError(404, "ACCOUNT_NOT_FOUND", "Account not found");
  return account;
}
