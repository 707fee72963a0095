/**
 * Event types and the data each carries (design: "Event data"), taken from
 * the `webhooks:` section of openapi.yaml through the generated types, so
 * what is emitted cannot drift from what receivers are told to expect.
 */
import type { components } from "../../generated/api.d.ts";
import { z } from "@hono/zod-openapi";
import { EVENT_TYPES, type EventType } from "../webhooks/schemas.ts";
import { PageQuerySchema } from "../http/schemas.ts";

type Schemas = components["schemas"];

export type InboxCreatedData = Schemas["InboxCreatedData"];
export type InboxExpiredData = Schemas["InboxExpiredData"];
export type MessageReceivedData = Schemas["MessageReceivedData"];
export type TestData = Schemas["TestData"];
export type WebhookDisabledData = Schemas["WebhookDisabledData"];
export type WebhookEnabledData = Schemas["WebhookEnabledData"];

/**
 * The data of each type of the event log: the subscribable ones, which
 * webhooks receive, and the operational ones about the account's webhooks,
 * which only the log, its stream and `listen` carry (no webhook may list
 * them in its `events`, so the outbox queues no attempt of them).
 */
export interface EventDataMap {
  "message.received": MessageReceivedData;
  "inbox.created": InboxCreatedData;
  "inbox.expired": InboxExpiredData;
  "webhook.disabled": WebhookDisabledData;
  "webhook.enabled": WebhookEnabledData;
}

/** The operational types of the log, about the account's webhooks: not subscribable. */
export const WEBHOOK_EVENT_TYPES = ["webhook.disabled", "webhook.enabled"] as const;

/** Every type of the event log, in the order openapi.yaml's `LogEventType` lists them. */
export const LOG_EVENT_TYPES = [...EVENT_TYPES, ...WEBHOOK_EVENT_TYPES] as const;

export const LogEventTypeSchema = z.enum(LOG_EVENT_TYPES).openapi("LogEventType");

/** The body of every delivery: `id` is the same on every retry. */
export interface EventEnvelope<T extends string = string, D = unknown> {
  id: string;
  type: T;
  createdAt: string;
  data: D;
}

export type { EventType };

// The event log API, named as in `openapi.yaml`.

/** An event as a webhook receives it: exactly `id`, `type`, `createdAt` and `data`. */
export const EventSchema = z.object({
  id: z.string(),
  type: LogEventTypeSchema,
  createdAt: z.iso.datetime(),
  data: z.record(z.string(), z.unknown()),
}).openapi("Event");

export const EventListSchema = z.object({
  data: z.array(EventSchema),
  nextCursor: z.string().nullable(),
}).openapi("EventList");

/** `types=message.received,webhook.disabled`: types of the log only; empty or absent means all. */
const typesParam = z.string().max(200).optional().transform((v, ctx) => {
  const types = (v ?? "").split(",").map((t) => t.trim()).filter((t) => t !== "");
  const unknown = types.filter((t) => !(LOG_EVENT_TYPES as readonly string[]).includes(t));
  if (unknown.length > 0) {
    ctx.addIssue({
      code: "custom",
      message: `Unknown event type: ${unknown.join(", ")} (known: ${LOG_EVENT_TYPES.join(", ")})`,
    });
    return z.NEVER;
  }
  return [...new Set(types)];
});

export const EventListQuerySchema = z.object({
  after: z.string().min(1).optional(),
  types: typesParam,
  limit: PageQuerySchema.shape.limit,
});

export const EventStreamQuerySchema = z.object({
  after: z.string().min(1).optional(),
  types: typesParam,
});

export const EventStreamHeadersSchema = z.object({
  "last-event-id": z.string().min(1).optional(),
});
