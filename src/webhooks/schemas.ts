/** Zod schemas of user webhooks and their exact field sets per response, named as in `openapi.yaml`. */
import { z } from "@hono/zod-openapi";

export const EVENT_TYPES = ["message.received", "inbox.created", "inbox.expired"] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const EventTypeSchema = z.enum(EVENT_TYPES).openapi("EventType");

const Events = z.array(EventTypeSchema).min(1).refine(
  (events) => new Set(events).size === events.length,
  "Events must be distinct",
).openapi({ uniqueItems: true });

const Url = z.string().max(2048);
const Secret = z.string().min(16).max(256);

export const WebhookCreateRequestSchema = z.strictObject({
  url: Url,
  events: Events,
  secret: Secret.optional(),
}).openapi("WebhookCreateRequest");

export const WebhookUpdateRequestSchema = z.strictObject({
  url: Url.optional(),
  events: Events.optional(),
  secret: Secret.nullable().optional(),
  active: z.boolean().optional(),
}).openapi("WebhookUpdateRequest");

export const WebhookSecretRotateRequestSchema = z.strictObject({
  secret: Secret.optional(),
  overlapSeconds: z.number().int().min(0).max(604_800).optional(),
}).openapi("WebhookSecretRotateRequest");

export const WebhookSecretRotatedSchema = z.object({
  secret: z.string().optional(),
  previousSecretExpiresAt: z.iso.datetime().nullable(),
}).openapi("WebhookSecretRotated");

export const WebhookCreatedSchema = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(EventTypeSchema),
  active: z.boolean(),
  createdAt: z.iso.datetime(),
}).openapi("WebhookCreated");

const summaryFields = {
  id: z.string(),
  url: z.string(),
  events: z.array(EventTypeSchema),
  active: z.boolean(),
  failureCount: z.number().int(),
  lastTriggeredAt: z.iso.datetime().nullable(),
  createdAt: z.iso.datetime(),
};

export const WebhookSummarySchema = z.object(summaryFields).openapi("WebhookSummary");

export const WebhookSchema = z.object({
  ...summaryFields,
  lastFailureAt: z.iso.datetime().nullable(),
  lastFailureReason: z.string().nullable(),
}).openapi("Webhook");

/** A webhook as stored (the secrets only as ciphertext). */
export interface WebhookRow {
  id: string;
  accountId: string;
  url: string;
  events: EventType[];
  secretCiphertext: string | null;
  /** The secret a rotation replaced, which signs beside the current one until `previousSecretExpiresAt`. */
  previousSecretCiphertext: string | null;
  previousSecretExpiresAt: Date | null;
  active: boolean;
  failureCount: number;
  lastTriggeredAt: Date | null;
  lastFailureAt: Date | null;
  lastFailureReason: string | null;
  createdAt: Date;
}

/** The columns the list form needs (`listWebhooks`). */
export type WebhookSummaryRow = Pick<
  WebhookRow,
  "id" | "url" | "events" | "active" | "failureCount" | "lastTriggeredAt" | "createdAt"
>;

const iso = (d: Date | null): string | null => d?.toISOString() ?? null;

/** The previous secret's ciphertext while its overlap lasts at `now`, else null (as the claim reads it). */
export function livePreviousSecret(
  w: Pick<WebhookRow, "previousSecretCiphertext" | "previousSecretExpiresAt">,
  now: Date,
): string | null {
  return w.previousSecretExpiresAt !== null && w.previousSecretExpiresAt > now ? w.previousSecretCiphertext : null;
}

/** The creation response: spec 4.2's five fields. */
export function toWebhookCreatedJson(w: WebhookRow): z.infer<typeof WebhookCreatedSchema> {
  return { id: w.id, url: w.url, events: w.events, active: w.active, createdAt: w.createdAt.toISOString() };
}

/** The list form: spec 4.2's seven fields. */
export function toWebhookSummaryJson(w: WebhookSummaryRow): z.infer<typeof WebhookSummarySchema> {
  return {
    id: w.id,
    url: w.url,
    events: w.events,
    active: w.active,
    failureCount: w.failureCount,
    lastTriggeredAt: iso(w.lastTriggeredAt),
    createdAt: w.createdAt.toISOString(),
  };
}

/** The single-webhook form, with the failure fields. */
export function toWebhookJson(w: WebhookRow): z.infer<typeof WebhookSchema> {
  return { ...toWebhookSummaryJson(w), lastFailureAt: iso(w.lastFailureAt), lastFailureReason: w.lastFailureReason };
}
