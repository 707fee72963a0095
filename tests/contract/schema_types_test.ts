/**
 * Compile-time agreement of the zod schemas in src with the types that
 * openapi-typescript generates from `openapi.yaml`: `deno check` (and so
 * `deno test`) fails when one of them drifts.
 *
 * Requests compare `z.input` (what a client sends, which is what the
 * generated types describe); responses compare `z.output` (what a handler
 * returns and a client receives). The two coincide today since no schema
 * transforms, but picking the faithful side keeps a later `.default()` or
 * `.transform()` from being reported as drift on the wrong side.
 */
import assert from "node:assert/strict";
import type { z } from "zod";
import type { components } from "../../generated/api.d.ts";
import { type AccountSchema, CredentialsSchema, type PlanSchema } from "../../src/accounts/schemas.ts";
import { type ApiKeyCreatedSchema, type ApiKeyCreateRequestSchema, ApiKeySchema } from "../../src/api_keys/schemas.ts";
import type {
  AdminAccountCreateRequestSchema,
  AdminAccountListSchema,
  AdminAccountUpdateRequestSchema,
} from "../../src/admin/schemas.ts";
import {
  type ErrorDetailSchema,
  ErrorSchema,
  type SuccessSchema,
  type TimestampInputSchema,
} from "../../src/http/schemas.ts";
import type * as W from "../../src/webhooks/schemas.ts";
import type * as D from "../../src/deliveries/schemas.ts";
import type * as M from "../../src/messages/schemas.ts";
import type * as E from "../../src/events/schemas.ts";
import type * as I from "../../src/inboxes/schemas.ts";

type Schemas = components["schemas"];

/** True only when A and B are identical types (optional vs required and readonly included). */
type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;

// The comparison itself must tell optional from required, or it proves nothing.
const _optionalIsNotRequired: Equals<{ a?: string }, { a: string }> = false;
const _nullIsNotOptional: Equals<{ a: string | null }, { a?: string }> = false;

// Shared.
const _error: Equals<z.output<typeof ErrorSchema>, Schemas["Error"]> = true;
const _errorDetail: Equals<z.output<typeof ErrorDetailSchema>, Schemas["ErrorDetail"]> = true;
const _success: Equals<z.output<typeof SuccessSchema>, Schemas["Success"]> = true;
const _timestampInput: Equals<z.input<typeof TimestampInputSchema>, Schemas["TimestampInput"]> = true;

// Accounts.
const _plan: Equals<z.output<typeof PlanSchema>, Schemas["Plan"]> = true;
const _account: Equals<z.output<typeof AccountSchema>, Schemas["Account"]> = true;
const _credentials: Equals<z.input<typeof CredentialsSchema>, Schemas["Credentials"]> = true;

// API keys.
const _apiKeyCreateRequest: Equals<z.input<typeof ApiKeyCreateRequestSchema>, Schemas["ApiKeyCreateRequest"]> = true;
const _apiKeyCreated: Equals<z.output<typeof ApiKeyCreatedSchema>, Schemas["ApiKeyCreated"]> = true;
const _apiKey: Equals<z.output<typeof ApiKeySchema>, Schemas["ApiKey"]> = true;

// Admin.
const _adminCreate: Equals<z.input<typeof AdminAccountCreateRequestSchema>, Schemas["AdminAccountCreateRequest"]> =
  true;
const _adminUpdate: Equals<z.input<typeof AdminAccountUpdateRequestSchema>, Schemas["AdminAccountUpdateRequest"]> =
  true;
const _adminList: Equals<z.output<typeof AdminAccountListSchema>, Schemas["AdminAccountList"]> = true;

// Webhooks.
const _eventType: Equals<z.output<typeof W.EventTypeSchema>, Schemas["EventType"]> = true;
const _webhookCreate: Equals<z.input<typeof W.WebhookCreateRequestSchema>, Schemas["WebhookCreateRequest"]> = true;
const _webhookUpdate: Equals<z.input<typeof W.WebhookUpdateRequestSchema>, Schemas["WebhookUpdateRequest"]> = true;
const _webhookCreated: Equals<z.output<typeof W.WebhookCreatedSchema>, Schemas["WebhookCreated"]> = true;
const _webhookSummary: Equals<z.output<typeof W.WebhookSummarySchema>, Schemas["WebhookSummary"]> = true;
const _webhook: Equals<z.output<typeof W.WebhookSchema>, Schemas["Webhook"]> = true;
const _rotate: Equals<z.input<typeof W.WebhookSecretRotateRequestSchema>, Schemas["WebhookSecretRotateRequest"]> = true;
const _rotated: Equals<z.output<typeof W.WebhookSecretRotatedSchema>, Schemas["WebhookSecretRotated"]> = true;

// Deliveries.
const _deliveryEventType: Equals<z.output<typeof D.DeliveryEventTypeSchema>, Schemas["DeliveryEventType"]> = true;
const _testResult: Equals<z.output<typeof D.WebhookTestResultSchema>, Schemas["WebhookTestResult"]> = true;
const _delivery: Equals<z.output<typeof D.DeliverySchema>, Schemas["Delivery"]> = true;
const _deliveryList: Equals<z.output<typeof D.DeliveryListSchema>, Schemas["DeliveryList"]> = true;
const _recover: Equals<z.input<typeof D.RecoverRequestSchema>, Schemas["RecoverRequest"]> = true;
const _recovered: Equals<z.output<typeof D.RecoverQueuedSchema>, Schemas["RecoverQueued"]> = true;
const _recoverDryRun: Equals<z.output<typeof D.RecoverDryRunSchema>, Schemas["RecoverDryRun"]> = true;

// Inboxes and messages.
const _inboxCreate: Equals<z.input<typeof I.InboxCreateRequestSchema>, Schemas["InboxCreateRequest"]> = true;
const _inbox: Equals<z.output<typeof I.InboxSchema>, Schemas["Inbox"]> = true;
const _inboxList: Equals<z.output<typeof I.InboxListSchema>, Schemas["InboxList"]> = true;
const _messageSummary: Equals<z.output<typeof M.MessageSummarySchema>, Schemas["MessageSummary"]> = true;
const _messageList: Equals<z.output<typeof M.MessageListSchema>, Schemas["MessageList"]> = true;
const _attachment: Equals<z.output<typeof M.AttachmentSchema>, Schemas["Attachment"]> = true;
const _message: Equals<z.output<typeof M.MessageSchema>, Schemas["Message"]> = true;
const _link: Equals<z.output<typeof M.LinkSchema>, Schemas["Link"]> = true;
const _event: Equals<z.output<typeof E.EventSchema>, Schemas["Event"]> = true;
const _logEventType: Equals<z.output<typeof E.LogEventTypeSchema>, Schemas["LogEventType"]> = true;
// What the outbox emits for each type of the log is what openapi.yaml documents for it.
const _disabledData: Equals<E.EventDataMap["webhook.disabled"], Schemas["WebhookDisabledEvent"]["data"]> = true;
const _enabledData: Equals<E.EventDataMap["webhook.enabled"], Schemas["WebhookEnabledEvent"]["data"]> = true;
const _eventList: Equals<z.output<typeof E.EventListSchema>, Schemas["EventList"]> = true;

Deno.test("schema types: values typed by the generated types pass the zod schemas", () => {
  // The checks above are compile-time; this makes the file run and checks
  // that the runtime schemas accept what the types allow.
  const key: Schemas["ApiKey"] = {
    id: "key_1",
    name: "ci",
    keyPrefix: "isk_abcd",
    lastUsedAt: null,
    createdAt: "2025-01-31T12:34:56.789Z",
    scopes: ["inboxes:read"],
    inboxIds: ["inb_1"],
    expiresAt: "2025-02-01T12:34:56.789Z",
  };
  assert.deepEqual(ApiKeySchema.parse(key), key);
  const credentials: Schemas["Credentials"] = { email: "a@example.com", password: "correct horse" };
  assert.deepEqual(CredentialsSchema.parse(credentials), credentials);
  const error: Schemas["Error"] = { success: false, error: "Not found", code: "NOT_FOUND" };
  assert.deepEqual(ErrorSchema.parse(error), error);
});
