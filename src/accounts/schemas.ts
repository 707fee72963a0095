/** Zod schemas of accounts, named as in `openapi.yaml`. */
import { z } from "@hono/zod-openapi";

export const PLANS = ["free", "pro", "business"] as const;
export type Plan = (typeof PLANS)[number];

export const PlanSchema = z.enum(PLANS).openapi("Plan");

export const AccountSchema = z.object({
  id: z.string(),
  email: z.string(),
  plan: PlanSchema,
  createdAt: z.iso.datetime(),
}).openapi("Account");

export const EmailSchema = z.email().max(254);
export const PasswordSchema = z.string().min(8).max(256);

export const CredentialsSchema = z.strictObject({
  email: EmailSchema,
  password: PasswordSchema,
}).openapi("Credentials");

/** An account as stored, without its password hash. */
export interface AccountRow {
  id: string;
  email: string;
  plan: Plan;
  createdAt: Date;
}

/** The API form of an account. */
export function toAccountJson(a: AccountRow): z.infer<typeof AccountSchema> {
  return { id: a.id, email: a.email, plan: a.plan, createdAt: a.createdAt.toISOString() };
}
