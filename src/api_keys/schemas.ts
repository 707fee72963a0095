/** Zod schemas of API keys, named as in `openapi.yaml`. */
import { z } from "@hono/zod-openapi";
import type { ApiKeyRow } from "./repo.ts";

export const ApiKeyCreateRequestSchema = z.strictObject({
  name: z.string().min(1).max(100),
}).openapi("ApiKeyCreateRequest");

export const ApiKeyCreatedSchema = z.object({
  id: z.string(),
  name: z.string(),
  key: z.string(),
  keyPrefix: z.string(),
  createdAt: z.iso.datetime(),
}).openapi("ApiKeyCreated");

export const ApiKeySchema = z.object({
  id: z.string(),
  name: z.string(),
  keyPrefix: z.string(),
  lastUsedAt: z.iso.datetime().nullable(),
  createdAt: z.iso.datetime(),
}).openapi("ApiKey");

/** The listing form of a key: never the key itself. */
export function toApiKeyJson(k: ApiKeyRow): z.infer<typeof ApiKeySchema> {
  return {
    id: k.id,
    name: k.name,
    keyPrefix: k.keyPrefix,
    lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
    createdAt: k.createdAt.toISOString(),
  };
}
