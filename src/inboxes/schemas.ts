/** Zod schemas of inboxes and their messages, named as in `openapi.yaml`. */
import { z } from "@hono/zod-openapi";
import { PathIdSchema } from "../http/schemas.ts";

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

const summaryFields = {
  id: z.string(),
  inboxId: z.string(),
  from: z.string(),
  to: z.string(),
  subject: z.string(),
  receivedAt: z.iso.datetime(),
  size: z.number().int(),
};

export const MessageSummarySchema = z.object(summaryFields).openapi("MessageSummary");

export const MessageListSchema = z.object({
  data: z.array(MessageSummarySchema),
  nextCursor: z.string().nullable(),
}).openapi("MessageList");

export const AttachmentSchema = z.object({
  filename: z.string().nullable(),
  contentType: z.string(),
  size: z.number().int(),
}).openapi("Attachment");

export const MessageSchema = z.object({
  ...summaryFields,
  text: z.string().nullable(),
  html: z.string().nullable(),
  headers: z.record(z.string(), z.string()),
  attachments: z.array(AttachmentSchema),
}).openapi("Message");

export const MessageParamsSchema = z.object({ id: PathIdSchema, messageId: PathIdSchema });

/** An inbox as stored. */
export interface InboxRow {
  id: string;
  accountId: string;
  address: string;
  createdAt: Date;
  expiresAt: Date;
}

/** Attachment metadata as stored. */
export type AttachmentMeta = z.infer<typeof AttachmentSchema>;

/** A message as listed (no bodies). */
export interface MessageSummaryRow {
  id: string;
  inboxId: string;
  fromAddress: string;
  toAddress: string;
  subject: string;
  size: number;
  receivedAt: Date;
}

/** A message with its bodies, headers and attachment metadata. */
export interface MessageRow extends MessageSummaryRow {
  textBody: string | null;
  htmlBody: string | null;
  headers: Record<string, string>;
  attachments: AttachmentMeta[];
}

/** The API form of an inbox. */
export function toInboxJson(i: InboxRow): z.infer<typeof InboxSchema> {
  return { id: i.id, address: i.address, createdAt: i.createdAt.toISOString(), expiresAt: i.expiresAt.toISOString() };
}

/** The list form of a message. */
export function toMessageSummaryJson(m: MessageSummaryRow): z.infer<typeof MessageSummarySchema> {
  return {
    id: m.id,
    inboxId: m.inboxId,
    from: m.fromAddress,
    to: m.toAddress,
    subject: m.subject,
    receivedAt: m.receivedAt.toISOString(),
    size: m.size,
  };
}

/** The single-message form. */
export function toMessageJson(m: MessageRow): z.infer<typeof MessageSchema> {
  return {
    ...toMessageSummaryJson(m),
    text: m.textBody,
    html: m.htmlBody,
    headers: m.headers,
    attachments: m.attachments,
  };
}
