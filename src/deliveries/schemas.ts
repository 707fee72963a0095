/** Zod schemas of the test endpoint and the delivery log, named as in `openapi.yaml`. */
import { z } from "@hono/zod-openapi";
import { TimestampInputSchema } from "../http/schemas.ts";
import type { DeliveryLogRow } from "./repo.ts";

export const DeliveryEventTypeSchema = z.enum(["message.received", "inbox.created", "inbox.expired", "test"])
  .openapi("DeliveryEventType");

export const WebhookTestResultSchema = z.object({
  success: z.boolean(),
  responseStatus: z.number().int(),
  responseBody: z.string().max(500),
  durationMs: z.number().int(),
}).openapi("WebhookTestResult");

export const DeliverySchema = z.object({
  id: z.string(),
  eventId: z.string(),
  eventType: DeliveryEventTypeSchema,
  attempt: z.number().int(),
  status: z.enum(["pending", "in_flight", "succeeded", "failed", "cancelled"]),
  responseStatus: z.number().int().nullable(),
  durationMs: z.number().int().nullable(),
  error: z.string().nullable(),
  url: z.string().nullable(),
  requestBody: z.string(),
  responseBody: z.string().nullable(),
  nextAttemptAt: z.iso.datetime().nullable(),
  createdAt: z.iso.datetime(),
}).openapi("Delivery");

export const DeliveryListSchema = z.object({
  data: z.array(DeliverySchema),
  nextCursor: z.string().nullable(),
}).openapi("DeliveryList");

export const RecoverRequestSchema = z.strictObject({
  since: TimestampInputSchema,
  until: TimestampInputSchema.optional(),
  dryRun: z.boolean().optional(),
}).refine((r) => r.until === undefined || Date.parse(r.until) >= Date.parse(r.since), {
  path: ["until"],
  message: "Must not be before since",
}).openapi("RecoverRequest");

export const RecoverQueuedSchema = z.object({ queued: z.number().int() }).openapi("RecoverQueued");

export const RecoverDryRunSchema = z.object({ wouldQueue: z.number().int() }).openapi("RecoverDryRun");

/** The API form of a log row. */
export function toDeliveryJson(r: DeliveryLogRow): z.infer<typeof DeliverySchema> {
  return {
    id: r.id,
    eventId: r.eventId,
    eventType: r.eventType as z.infer<typeof DeliveryEventTypeSchema>,
    attempt: r.attempt,
    status: r.status,
    responseStatus: r.responseStatus,
    durationMs: r.durationMs,
    error: r.error,
    url: r.url,
    requestBody: r.requestBody,
    responseBody: r.responseBody,
    nextAttemptAt: r.nextAttemptAt?.toISOString() ?? null,
    createdAt: r.createdAt.toISOString(),
  };
}
