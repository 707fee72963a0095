/**
 * One attempt, in stages: prepare (decrypt the secret, sign, build headers)
 * -> send (the HTTP call) -> record (result, failure accounting, retry). Each
 * stage returns a plain value, so a failure in one is handled where it happens.
 */
import { getLogger } from "@logtape/logtape";
import type { Sql } from "../db/client.ts";
import type { Clock } from "../shared/clock.ts";
import { newId } from "../shared/ids.ts";
import { buildDeliveryHeaders } from "./signer.ts";
import type { SigningKeyCache } from "./signing_keys.ts";
import type { ResultWriter } from "./result_writer.ts";
import type { OutgoingRequest, WebhookHttpClient } from "./http_client.ts";
import { judge, type Verdict } from "./verdict.ts";
import { holdUntil, retryDelayMs } from "./retry_schedule.ts";
import { newEvent } from "./outbox.ts";
import type * as repo from "./repo.ts";

const log = getLogger(["inbox", "deliveries"]);

/** Spec 6.3: consecutive failures that disable a webhook. */
export const DISABLE_AFTER_FAILURES = 5;

/** How much of a receiver's answer the delivery log keeps, in characters. */
export const LOGGED_RESPONSE_CHARS = 2_000;

/** What the dispatcher needs. */
export interface DispatcherDeps {
  sql: Sql;
  clock: Clock;
  /** Imported keys of recently used secrets, so an attempt neither decrypts nor imports. */
  signingKeys: SigningKeyCache;
  http: WebhookHttpClient;
  /** Records results, successes and failures alike, in batches (group commit). */
  results: ResultWriter;
  serviceName: string;
  timeoutMs: number;
  /** This instance's claim owner id. */
  worker: string;
  random?: () => number;
}

/**
 * Builds the request of an attempt: the stored body, signed with each of the
 * webhook's live secrets (none, its secret, or during the overlap of a
 * rotation the new one and the one it replaced, which the caller passes only
 * while it is live); `stop` aborts the send.
 */
export async function prepare(
  deps: Pick<DispatcherDeps, "signingKeys" | "serviceName" | "timeoutMs" | "clock">,
  d: {
    id: string;
    eventId: string;
    webhookId: string;
    eventType: string;
    payload: string;
    url: string;
    secretCiphertext: string | null;
    previousSecretCiphertext: string | null;
  },
  stop?: AbortSignal,
): Promise<OutgoingRequest> {
  // Newest first. Each secret's key is cached by its own ciphertext: the set is made afresh for every attempt
  // from what the claim read, so an overlap that ended or a secret replaced since is never signed with.
  const sealed = [d.secretCiphertext, d.previousSecretCiphertext].filter((c) => c !== null);
  const secrets = await Promise.all(sealed.map((c) => deps.signingKeys.get(d.webhookId, c)));
  const headers = buildDeliveryHeaders({
    serviceName: deps.serviceName,
    webhookId: d.webhookId,
    eventId: d.eventId,
    eventType: d.eventType,
    deliveryId: d.id,
    timestamp: Math.floor(deps.clock.now().getTime() / 1000),
    body: d.payload,
    secrets,
  });
  return { url: d.url, headers, body: d.payload, timeoutMs: deps.timeoutMs, ...(stop ? { signal: stop } : {}) };
}

/**
 * Pauses between tries to record a result while the database does not answer,
 * short enough that once it answers again the slots free within a moment.
 */
const RECORD_BACKOFF_MS = [50, 100, 200, 250];
/** Recording gives up this long before the lease ends, so it never closes a later claim of the same row. */
const RECORD_LEASE_MARGIN_MS = 500;

/**
 * Records an attempt's verdict, trying again while the database is away (a
 * restart, a failover). The attempt has happened: its result should not be
 * lost to a blip. Past the lease on its account another worker may take the
 * attempt over, so recording stops there and the attempt is sent again (at
 * least once).
 */
export async function recordWithRetry(
  deps: DispatcherDeps,
  d: repo.ClaimedDelivery,
  verdict: Verdict,
): Promise<repo.Recorded> {
  const started = Date.now();
  const firstLease = d.leaseUntil.getTime();
  const budgetMs = firstLease - deps.clock.now().getTime() - RECORD_LEASE_MARGIN_MS;
  for (let tries = 0;; tries++) {
    try {
      return await record(deps, d, verdict);
    } catch (err) {
      const pause = RECORD_BACKOFF_MS[Math.min(tries, RECORD_BACKOFF_MS.length - 1)]!;
      // The lease's end moves on while the heartbeat renews it (lease_keeper.ts).
      const leftMs = budgetMs + (d.leaseUntil.getTime() - firstLease) - (Date.now() - started);
      if (pause >= leftMs) throw err;
      if (tries === 0) {
        log.warn("Recording delivery {id} failed, trying again: {error}", { id: d.id, error: String(err) });
      }
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}

/**
 * Records an attempt's verdict through the result writer (in batches, in the
 * order attempts finish), with the failure accounting: a success
 * resets the webhook's failureCount; a failure increments it and sets
 * lastFailureAt/lastFailureReason, queues the next retry of the schedule,
 * holds the webhook when the receiver answered 429 or 503 with Retry-After,
 * and the 5th in a row disables the webhook, cancels its pending attempts and
 * emits `webhook.disabled`.
 */
export async function record(deps: DispatcherDeps, d: repo.ClaimedDelivery, verdict: Verdict): Promise<repo.Recorded> {
  const now = deps.clock.now();
  const result = {
    id: d.id,
    worker: deps.worker,
    url: d.url,
    responseStatus: verdict.responseStatus,
    durationMs: verdict.durationMs,
    error: verdict.ok ? null : verdict.reason,
    responseBody: verdict.responseBody,
    finishedAt: now,
  };
  // A lost claim (the lease ran out and another worker took the attempt
  // over) records nothing: the other worker's result counts.
  if (verdict.ok) return await deps.results.record({ ok: true, result });
  const delay = retryDelayMs(d.attempt, verdict.retryAfterSeconds, deps.random);
  const retry = delay === undefined
    ? undefined
    : { id: newId("dlv", now.getTime()), runAt: new Date(now.getTime() + delay) };
  // Written only if this is the failure that disables the webhook (its ref is the attempt): then always with it.
  const disabling = {
    accountId: d.accountId,
    ref: d.id,
    event: newEvent("webhook.disabled", {
      webhookId: d.webhookId,
      url: d.url,
      failureCount: DISABLE_AFTER_FAILURES,
      lastFailureReason: verdict.reason,
      disabledAt: now.toISOString(),
    }, now),
  };
  return await deps.results.record({
    ok: false,
    result,
    retry,
    holdUntil: holdUntil(verdict.responseStatus, verdict.retryAfterSeconds, now),
    disabling,
  });
}

/**
 * The exchange of one claimed attempt: prepare (sign) and send, judged; `stop`
 * (its lease was lost) aborts the send. Never rejects: a request that cannot
 * be prepared is a failed attempt.
 */
export async function send(deps: DispatcherDeps, d: repo.ClaimedDelivery, stop?: AbortSignal): Promise<Verdict> {
  try {
    return judge(await deps.http.send(await prepare(deps, d, stop), LOGGED_RESPONSE_CHARS), deps.clock.now());
  } catch (err) {
    // A secret that no longer decrypts (rotated key) is the operator's problem
    // to see, and the receiver's attempt a failure, not a crash of the queue.
    return {
      ok: false,
      responseStatus: null,
      reason: `Could not prepare the delivery: ${(err as Error).message}`,
      durationMs: 0,
      retryAfterSeconds: undefined,
      responseBody: null,
    };
  }
}

/** Records the verdict of an attempt's exchange (`send`) and says what became of it in the log. */
export async function complete(
  deps: DispatcherDeps,
  d: repo.ClaimedDelivery,
  verdict: Verdict,
): Promise<repo.Recorded> {
  const recorded = await recordWithRetry(deps, d, verdict);
  // The queue runs each attempt with its delivery and webhook ids as log
  // context. Never the URL (it may hold a token), the body or the secret.
  if (verdict.ok) {
    log.debug("Delivered event {eventId} (attempt {attempt}): HTTP {status} in {ms} ms", {
      eventId: d.eventId,
      attempt: d.attempt,
      status: verdict.responseStatus,
      ms: verdict.durationMs,
    });
  } else {
    log.warn("Delivery of event {eventId} failed (attempt {attempt}): {reason}; {recorded}", {
      accountId: d.accountId,
      eventId: d.eventId,
      attempt: d.attempt,
      reason: verdict.reason,
      recorded,
    });
    if (recorded === "disabled") {
      log.error("Webhook {webhookId} disabled after {failures} consecutive failures", {
        accountId: d.accountId,
        webhookId: d.webhookId,
        failures: DISABLE_AFTER_FAILURES,
      });
    }
  }
  return recorded;
}

/** Runs one claimed attempt through every stage: its exchange, then its result recorded. */
export async function deliver(
  deps: DispatcherDeps,
  d: repo.ClaimedDelivery,
  stop?: AbortSignal,
): Promise<{ verdict: Verdict; recorded: repo.Recorded }> {
  const verdict = await send(deps, d, stop);
  return { verdict, recorded: await complete(deps, d, verdict) };
}
