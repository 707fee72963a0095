/**
 * Webhook registration rules: HTTPS and a public address, no duplicate URL,
 * at most 10 webhooks and 10 creations an hour per account, in the design's order:
 * validation -> unsafe URL -> duplicate -> maximum count -> hourly creations.
 */
import type { Sql } from "../db/client.ts";
import { ApiError, notFound } from "../errors.ts";
import { newId } from "../shared/ids.ts";
import { errorCode } from "../shared/error_code.ts";
import type { Clock } from "../shared/clock.ts";
import type { SecretBox } from "../secrets/secret_box.ts";
import { checkWebhookUrl, type UrlCheckOptions } from "../url_safety/check_url.ts";
import { isLoopbackHost } from "../url_safety/address.ts";
import { lockAccount } from "../accounts/repo.ts";
import { checkAndRecord, type Policy } from "../rate_limit/limiter.ts";
import type { Outbox } from "../deliveries/outbox.ts";
import { newWebhookSecret } from "../deliveries/signer.ts";
import * as repo from "./repo.ts";
import type { EventType, WebhookRow } from "./schemas.ts";

export const MAX_WEBHOOKS = 10;
/** Spec section 8: at most 10 creations per account in any rolling hour. */
export const HOURLY_CREATIONS: Policy = { name: "webhook-creations", limit: 10, windowSeconds: 3600 };
/** The spec's message for any url or events problem. */
export const URL_OR_EVENTS_MESSAGE = "Invalid URL (must be HTTPS) or events";

/** What the webhook rules need. */
export interface WebhookDeps {
  sql: Sql;
  clock: Clock;
  secretBox: SecretBox;
  urlCheck: UrlCheckOptions;
  /** Emits `webhook.enabled` with the PATCH that enables a webhook. */
  outbox: Pick<Outbox, "transaction">;
}

/** A rotation keeps the replaced secret signing for a day unless asked otherwise (Svix's and Stripe's default). */
export const DEFAULT_OVERLAP_SECONDS = 86_400;

const notFoundError = () => notFound("WEBHOOK_NOT_FOUND", "Webhook not found");
const duplicateError = () => new ApiError(400, "DUPLICATE_WEBHOOK_URL", "Webhook URL already registered");

/** The normalised URL, or the 400 that refuses it. */
async function acceptableUrl(input: string, opts: UrlCheckOptions): Promise<string> {
  const check = await checkWebhookUrl(input, opts);
  if (check.ok) return check.normalized;
  if (check.kind === "invalid") {
    throw new ApiError(400, "VALIDATION_ERROR", URL_OR_EVENTS_MESSAGE, [{ path: "url", message: check.reason }]);
  }
  // The way out for a receiver on the developer's own machine, named where they meet the refusal;
  // never for other private addresses (a tenant is not to be told to trust the cloud metadata endpoint).
  const host = new URL(input).hostname;
  const hint = isLoopbackHost(host) ? `; for a development receiver, add ${host} to WEBHOOK_TRUSTED_HOSTS` : "";
  throw new ApiError(400, "INVALID_WEBHOOK_URL", `Webhook URL must point to a public address${hint}`, [
    { path: "url", message: check.reason },
  ]);
}

function isUniqueViolation(err: unknown): boolean {
  return errorCode(err) === "23505";
}

/** Registers a webhook: active, failureCount 0. */
export async function createWebhook(
  deps: WebhookDeps,
  accountId: string,
  input: { url: string; events: EventType[]; secret?: string | undefined },
): Promise<WebhookRow> {
  const url = await acceptableUrl(input.url, deps.urlCheck);
  const now = deps.clock.now();
  const id = newId("wh", now.getTime());
  const secretCiphertext = input.secret ? await deps.secretBox.seal(input.secret, id) : null;
  return await deps.sql.begin(async (tx) => {
    // Serialises this account's creations on every instance: the count and
    // the hourly window cannot be raced past.
    await lockAccount(tx, accountId);
    if (await repo.urlTaken(tx, accountId, url)) throw duplicateError();
    if (await repo.countWebhooks(tx, accountId) >= MAX_WEBHOOKS) {
      throw new ApiError(400, "WEBHOOK_LIMIT", `Maximum ${MAX_WEBHOOKS} webhooks allowed`);
    }
    // Recorded in this transaction: only creations that commit use quota, and
    // deleting a webhook later gives none back.
    const decision = await checkAndRecord(tx, `webhook-create:${accountId}`, HOURLY_CREATIONS, now);
    if (!decision.allowed) {
      throw new ApiError(
        429,
        "RESOURCE_LIMIT_EXCEEDED",
        `Too many webhooks created: at most ${HOURLY_CREATIONS.limit} per hour`,
        undefined,
        { "Retry-After": String(decision.resetSeconds) },
      );
    }
    const row = await repo.insertWebhook(tx, {
      id,
      accountId,
      url,
      events: input.events,
      secretCiphertext,
      createdAt: now,
    });
    if (!row) throw duplicateError();
    return row;
  });
}

/** One of the account's webhooks; 404 otherwise. */
export async function getWebhook(deps: Pick<WebhookDeps, "sql">, accountId: string, id: string): Promise<WebhookRow> {
  const row = await repo.findWebhook(deps.sql, accountId, id);
  if (!row) throw notFoundError();
  return row;
}

/**
 * Applies a PATCH; `active: true` also resets failureCount (spec 3.1) and, on
 * a webhook that was inactive, emits `webhook.enabled` in the same
 * transaction. A new secret (or `null`) replaces the secret at once and ends
 * the overlap of a rotation.
 */
export async function updateWebhook(
  deps: WebhookDeps,
  accountId: string,
  id: string,
  input: {
    url?: string | undefined;
    events?: EventType[] | undefined;
    secret?: string | null | undefined;
    active?: boolean | undefined;
  },
): Promise<void> {
  await getWebhook(deps, accountId, id);
  const changes: repo.WebhookChanges = {};
  if (input.url !== undefined) changes.url = await acceptableUrl(input.url, deps.urlCheck);
  if (input.events !== undefined) changes.events = input.events;
  if (input.secret !== undefined) {
    changes.secretCiphertext = input.secret === null ? null : await deps.secretBox.seal(input.secret, id);
  }
  if (input.active !== undefined) changes.active = input.active;
  try {
    await deps.outbox.transaction(async (tx, emit) => {
      // Also keeps a failure from disabling the webhook meanwhile: recording one locks the account FOR KEY SHARE
      // (deliveries/sql/record_results.sql), so whether this PATCH enables it is read from the latest row.
      await lockAccount(tx, accountId);
      if (changes.url !== undefined && await repo.urlTaken(tx, accountId, changes.url, id)) throw duplicateError();
      const updated = await repo.updateWebhook(tx, accountId, id, changes);
      if (!updated) throw notFoundError();
      if (updated.active && !updated.wasActive) {
        const now = deps.clock.now();
        await emit(
          accountId,
          "webhook.enabled",
          { webhookId: id, url: updated.url, enabledAt: now.toISOString() },
          now,
        );
      }
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw duplicateError();
    throw err;
  }
}

/** What a rotation answers: the generated secret (only when the request chose none), and the overlap's end. */
export interface RotatedSecret {
  secret?: string;
  /** Until when the replaced secret signs beside the new one; null when there was none. */
  previousSecretExpiresAt: string | null;
}

/**
 * Rotates one of the account's webhook secrets: `secret`, or a generated one
 * returned to the caller, becomes the current secret, sealed as any secret
 * is; the one it replaces signs beside it for `overlapSeconds`. 404 for
 * another account's or an unknown webhook.
 */
export async function rotateSecret(
  deps: WebhookDeps,
  accountId: string,
  id: string,
  input: { secret?: string | undefined; overlapSeconds?: number | undefined },
): Promise<RotatedSecret> {
  const secret = input.secret ?? newWebhookSecret();
  const now = deps.clock.now();
  const until = new Date(now.getTime() + (input.overlapSeconds ?? DEFAULT_OVERLAP_SECONDS) * 1000);
  const sealed = await deps.secretBox.seal(secret, id);
  const rotated = await repo.rotateSecret(deps.sql, accountId, id, sealed, now, until);
  if (!rotated) throw notFoundError();
  return {
    ...(input.secret === undefined ? { secret } : {}),
    previousSecretExpiresAt: rotated.hadSecret ? until.toISOString() : null,
  };
}

/** Deletes one of the account's webhooks; 404 otherwise. */
export async function deleteWebhook(deps: WebhookDeps, accountId: string, id: string): Promise<void> {
  if (!await repo.deleteWebhook(deps.sql, accountId, id)) throw notFoundError();
}
