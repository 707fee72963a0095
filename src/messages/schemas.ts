/** Zod schemas of messages, named as in `openapi.yaml`, and their stored and API forms. */
import { z } from "@hono/zod-openapi";
import { PageQuerySchema, PathIdSchema, TimestampInputSchema } from "../http/schemas.ts";

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
  id: z.string(),
  filename: z.string().nullable(),
  contentType: z.string(),
  size: z.number().int(),
}).openapi("Attachment");

export const LinkSchema = z.object({
  url: z.string(),
  text: z.string().nullable(),
}).openapi("Link");

export const MessageSchema = z.object({
  ...summaryFields,
  text: z.string().nullable(),
  html: z.string().nullable(),
  headers: z.record(z.string(), z.string()),
  attachments: z.array(AttachmentSchema),
  codes: z.array(z.string()),
  links: z.array(LinkSchema),
}).openapi("Message");

export const MessageParamsSchema = z.object({ id: PathIdSchema, messageId: PathIdSchema });

export const AttachmentParamsSchema = z.object({
  id: PathIdSchema,
  messageId: PathIdSchema,
  attachmentId: PathIdSchema,
});

/** A filter value: a case-insensitive substring, 1 to 500 characters. */
const filterText = z.string().min(1).max(500);

/** The filters of the list and of the wait: combined with AND. */
const filterFields = {
  from: filterText.optional(),
  to: filterText.optional(),
  subject: filterText.optional(),
  contains: filterText.optional(),
  since: TimestampInputSchema.optional(),
};

export const MessageListQuerySchema = PageQuerySchema.extend(filterFields);

/** Longest hold of one wait: under the 60 s idle timeout of most proxies and load balancers. */
export const MAX_WAIT_MS = 55_000;
export const DEFAULT_WAIT_MS = 30_000;

export const MessageWaitQuerySchema = z.object({
  // Digits only: "1.5", "", "1e3" and " 5" are refused rather than rounded or coerced.
  timeoutMs: z.string().regex(/^\d{1,6}$/, "must be a whole number of milliseconds").optional()
    .transform((v) => v === undefined ? DEFAULT_WAIT_MS : Number(v))
    .pipe(z.number().int().min(0).max(MAX_WAIT_MS)),
  after: z.string().min(1).optional(),
  ...filterFields,
});

/** The filters as the service reads them. */
export interface MessageFilters {
  from?: string | undefined;
  /** A case-insensitive substring of the recipient address the message keeps (a tag included). */
  to?: string | undefined;
  subject?: string | undefined;
  contains?: string | undefined;
  since?: Date | undefined;
}

/** Attachment metadata as stored (the contents are apart, in `attachments`). */
export type AttachmentMeta = z.infer<typeof AttachmentSchema>;

/** A link found in a message. */
export type Link = z.infer<typeof LinkSchema>;

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

/** A message with its bodies, headers, attachment metadata, codes and links. */
export interface MessageRow extends MessageSummaryRow {
  textBody: string | null;
  htmlBody: string | null;
  headers: Record<string, string>;
  attachments: AttachmentMeta[];
  codes: string[];
  links: Link[];
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
    codes: m.codes,
    links: m.links,
  };
}
