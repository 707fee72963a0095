/** Zod schemas of API keys, named as in `openapi.yaml`. */
import { z } from "@hono/zod-openapi";
import { TimestampInputSchema } from "../http/schemas.ts";
import { SCOPES } from "../auth/scopes.ts";
import type { ApiKeyRow } from "./repo.ts";

const ScopeSchema = z.enum(SCOPES).openapi("Scope");

export const ApiKeyCreateRequestSchema = z.strictObject({
  name: z.string().min(1).max(100),
  scopes: z.array(ScopeSchema).min(1).max(SCOPES.length).optional(),
  inboxIds: z.array(z.string().min(1).max(100)).min(1).max(100).optional(),
  expiresAt: TimestampInputSchema.optional(),
  expiresInSeconds: z.number().int().min(60).max(31_536_000).optional(),
}).refine((b) => b.expiresAt === undefined || b.expiresInSeconds === undefined, {
  message: "Give expiresAt or expiresInSeconds, not both",
  path: ["expiresInSeconds"],
}).openapi("ApiKeyCreateRequest");

/** What a key may do, as responses show it. */
const grantFields = {
  scopes: z.array(ScopeSchema),
  inboxIds: z.array(z.string()).nullable(),
  expiresAt: z.iso.datetime().nullable(),
};

export const ApiKeyCreatedSchema = z.object({
  id: z.string(),
  name: z.string(),
  key: z.string(),
  keyPrefix: z.string(),
  createdAt: z.iso.datetime(),
  ...grantFields,
}).openapi("ApiKeyCreated");

export const ApiKeySchema = z.object({
  id: z.string(),
  name: z.string(),
  keyPrefix: z.string(),
  lastUsedAt: z.iso.datetime().nullable(),
  createdAt: z.iso.datetime(),
  ...grantFields,
}).openapi("ApiKey");

/** The scopes, inboxes and expiry of a stored key, as responses show them. */
function grantJson(k: ApiKeyRow) {
  return {
    scopes: (k.scopes ?? [...SCOPES]) as (typeof SCOPES)[number][],
    inboxIds: k.inboxIds,
    expiresAt: k.expiresAt?.toISOString() ?? null,
  };
}

/** The listing form of a key: never the key itself. */
export function toApiKeyJson(k: ApiKeyRow): z.infer<typeof ApiKeySchema> {
  return {
    id: k.id,
    name: k.name,
    keyPrefix: k.keyPrefix,
    lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
    createdAt: k.createdAt.toISOString(),
    ...grantJson(k),
  };
}

/** The creation response: the key, shown this once. */
export function toApiKeyCreatedJson(k: ApiKeyRow & { key: string }): z.infer<typeof ApiKeyCreatedSchema> {
  return {
    id: k.id,
    name: k.name,
    key: k.key,
    keyPrefix: k.keyPrefix,
    createdAt: k.createdAt.toISOString(),
    ...grantJson(k),
  };
}
