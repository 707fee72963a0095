/** Zod schemas of inboxes, named as in `openapi.yaml`. */
import { z } from "@hono/zod-openapi";

/** Ttl bounds and default (design: "Inboxes"). */
export const MIN_TTL_SECONDS = 60;
export const MAX_TTL_SECONDS = 604_800;
export const DEFAULT_TTL_SECONDS = 3600;

/** Lowercase only: addresses are stored and matched lowercased. */
export const LOCAL_PART_PATTERN = /^[a-z0-9](?:[a-z0-9._-]{0,62}[a-z0-9])?$/;

export const InboxCreateRequestSchema = z.strictObject({
  localPart: z.string().min(1).max(64).regex(LOCAL_PART_PATTERN).optional(),
  ttlSeconds: z.number().int().min(MIN_TTL_SECONDS).max(MAX_TTL_SECONDS).optional(),
}).openapi("InboxCreateRequest");

export const InboxSchema = z.object({
  id: z.string(),
  address: z.string(),
  createdAt: z.iso.datetime(),
  expiresAt: z.iso.datetime(),
}).openapi("Inbox");

export const InboxListSchema = z.object({
  data: z.array(InboxSchema),
  nextCursor: z.string().nullable(),
}).openapi("InboxList");

/** An inbox as stored. */
export interface InboxRow {
  id: string;
  accountId: string;
  address: string;
  createdAt: Date;
  expiresAt: Date;
}

/** The API form of an inbox. */
export function toInboxJson(i: InboxRow): z.infer<typeof InboxSchema> {
  return { id: i.id, address: i.address, createdAt: i.createdAt.toISOString(), expiresAt: i.expiresAt.toISOString() };
}
