/** Zod schemas of the operator interface, named as in `openapi.yaml`. */
import { z } from "@hono/zod-openapi";
import { EmailSchema, PasswordSchema, PlanSchema } from "../accounts/schemas.ts";

export const AdminAccountCreateRequestSchema = z.strictObject({
  email: EmailSchema,
  password: PasswordSchema,
  plan: PlanSchema,
}).openapi("AdminAccountCreateRequest");

export const AdminAccountUpdateRequestSchema = z.strictObject({
  plan: PlanSchema,
}).openapi("AdminAccountUpdateRequest");
