/** The delivery features a user calls: the test endpoint, the delivery log, redelivery. */
import { getLogger } from "@logtape/logtape";
import type { Sql } from "../db/client.ts";
import { ApiError, notFound } from "../errors.ts";
import type { Clock } from "../shared/clock.ts";
import { newId } from "../shared/ids.ts";
import { DEFAULT_PAGE_SIZE, toPage } from "../shared/cursor.ts";
import { invalidCursor, pagePosition } from "../http/page.ts";
import { livePreviousSecret, type WebhookRow } from "../webhooks/schemas.ts";
import type { EventEnvelope, TestData } from "../events/schemas.ts";
import { prepare } from "./dispatcher.ts";
import { judge } from "./verdict.ts";
import type { DispatcherDeps } from "./dispatcher.ts";
import type { Outbox } from "./outbox.ts";
import * as repo from "./repo.ts";

// Lines written here carry the request's id (the request_id middleware's log context).
const log = getLogger(["inbox", "deliveries"]);

/** Spec 4.2: the test endpoint's responseBody is cut at 500 characters. */
export const TEST_BODY_LIMIT = 500;

/** The test endpoint's answer. */
export interface TestResult {
  success: boolean;
  responseStatus: number;
  responseBody: string;
  durationMs: number;
}

/**
 * Sends a `test` event now, signed and with the same headers as a real
 * delivery (with both secrets during the overlap of a rotation), and reports
 * what came back. It records nothing: failureCount, active, lastTriggeredAt
 * and the hold stay as they are (spec 3.1, 4.2).
 */
export async function sendTestEvent(deps: DispatcherDeps, webhook: WebhookRow): Promise<TestResult> {
  const now = deps.clock.now();
  const envelope: EventEnvelope<"test", TestData> = {
    id: newId("evt", now.getTime()),
    type: "test",
    createdAt: now.toISOString(),
    data: { webhookId: webhook.id, message: "This is a test event from Inbox Service." },
  };
  const request = await prepare(deps, {
    id: newId("dlv", now.getTime()),
    eventId: envelope.id,
    webhookId: webhook.id,
    eventType: "test",
    payload: JSON.stringify(envelope),
    url: webhook.url,
    secretCiphertext: webhook.secretCiphertext,
    previousSecretCiphertext: livePreviousSecret(webhook, now),
  });
  const outcome = await deps.http.send(request, TEST_BODY_LIMIT);
  const verdict = judge(outcome, deps.clock.now());
  log.info("Test event sent to webhook {webhookId}: {outcome} in {ms} ms", {
    webhookId: webhook.id,
    outcome: verdict.ok ? `HTTP ${verdict.responseStatus}` : verdict.reason,
    ms: outcome.durationMs,
  });
  if (outcome.kind === "error") {
    return {
      success: false,
      responseStatus: 0,
      responseBody: outcome.reason.slice(0, TEST_BODY_LIMIT),
      durationMs: outcome.durationMs,
    };
  }
  return {
    success: verdict.ok,
    responseStatus: outcome.status,
    responseBody: outcome.body.slice(0, TEST_BODY_LIMIT),
    durationMs: outcome.durationMs,
  };
}

/** A page of a webhook's delivery log, newest first. */
export async function listDeliveries(
  sql: Sql,
  webhookId: string,
  page: { limit?: number | undefined; cursor?: string | undefined },
): Promise<{ data: repo.DeliveryLogRow[]; nextCursor: string | null }> {
  const limit = page.limit ?? DEFAULT_PAGE_SIZE;
  const position = pagePosition(page.cursor);
  // The log's position is a bigint: anything that is not one is not a cursor this service issued.
  if (position && !(/^\d{1,19}$/.test(position.id) && BigInt(position.id) <= 9223372036854775807n)) {
    throw invalidCursor();
  }
  const after = position ? { createdAt: position.createdAt, seq: position.id } : undefined;
  const rows = await repo.listAttempts(sql, webhookId, limit + 1, after);
  return toPage(rows, limit, (r) => [r.createdAt, r.seq]);
}

/** 400 WEBHOOK_INACTIVE: attempts are queued only for an active webhook. */
function inactive(): ApiError {
  return new ApiError(400, "WEBHOOK_INACTIVE", "Webhook is inactive: enable it first (PATCH active: true)");
}

/** What a recover did: queued so many attempts, or (a dry run) would have. */
export type Recovered = { dryRun: false; queued: number } | { dryRun: true; wouldQueue: number };

/**
 * Queues again every event of the window whose latest attempt on the webhook
 * failed or was cancelled, oldest first, in one statement through the outbox;
 * a dry run counts them and queues nothing, on an inactive webhook too. The
 * window runs from `since` to `until` (now when absent), over the events'
 * creation times.
 */
export async function recover(
  deps: { sql: Sql; clock: Clock; outbox: Outbox },
  webhook: WebhookRow,
  input: { since: string; until?: string | undefined; dryRun?: boolean | undefined },
): Promise<Recovered> {
  const now = deps.clock.now();
  const window = { since: new Date(input.since), until: input.until === undefined ? now : new Date(input.until) };
  if (input.dryRun) return { dryRun: true, wouldQueue: await repo.countLost(deps.sql, webhook.id, window) };
  if (!webhook.active) throw inactive();
  const queued = await deps.outbox.recover(webhook.id, window, now);
  log.info("{queued} failed or cancelled events since {since} queued again for webhook {webhookId} (recover)", {
    queued,
    since: window.since.toISOString(),
    webhookId: webhook.id,
  });
  return { dryRun: false, queued };
}

/** Queues the event of one of the webhook's deliveries again, as a new attempt, through the outbox. */
export async function redeliver(
  deps: { sql: Sql; clock: Clock; outbox: Outbox },
  webhook: WebhookRow,
  deliveryId: string,
): Promise<repo.DeliveryLogRow> {
  const original = await repo.findAttempt(deps.sql, webhook.id, deliveryId);
  if (!original) throw notFound("DELIVERY_NOT_FOUND", "Delivery not found");
  if (!webhook.active) throw inactive();
  const id = await deps.outbox.requeue(original.eventId, webhook.id, deps.clock.now());
  log.info("Event {eventId} queued again for webhook {webhookId} as delivery {deliveryId} (redelivery of {of})", {
    eventId: original.eventId,
    webhookId: webhook.id,
    deliveryId: id,
    of: original.id,
  });
  return (await repo.findLogRow(deps.sql, id))!;
}
