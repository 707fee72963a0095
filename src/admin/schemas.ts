/** Zod schemas of the operator interface, named as in `openapi.yaml`. */
import { z } from "@hono/zod-openapi";
import { AccountSchema, EmailSchema, PasswordSchema, PlanSchema } from "../accounts/schemas.ts";

export const AdminAccountCreateRequestSchema = z.strictObject({
  email: EmailSchema,
  password: PasswordSchema,
  plan: PlanSchema,
}).openapi("AdminAccountCreateRequest");

export const AdminAccountUpdateRequestSchema = z.strictObject({
  plan: PlanSchema,
}).openapi("AdminAccountUpdateRequest");

/** `GET /admin/accounts?email=`: the email to look for, in any letter case. */
export const AdminAccountQuerySchema = z.object({
  email: z.string().min(1).max(254).openapi({
    param: { description: "The account's email address (any letter case).", example: "dev@example.com" },
  }),
});

export const AdminAccountListSchema = z.object({
  data: z.array(AccountSchema),
}).openapi("AdminAccountList");
