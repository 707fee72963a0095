/** SQL of user webhooks. */
import type { Db } from "../db/client.ts";
import type { EventType, WebhookRow, WebhookSummaryRow } from "./schemas.ts";

const COLUMNS = "id, account_id, url, events, secret_ciphertext, previous_secret_ciphertext, " +
  "previous_secret_expires_at, active, failure_count, last_triggered_at, last_failure_at, last_failure_reason, created_at";

/** Inserts a webhook; undefined when the account already has that URL. */
export async function insertWebhook(
  db: Db,
  w: {
    id: string;
    accountId: string;
    url: string;
    events: EventType[];
    secretCiphertext: string | null;
    createdAt: Date;
  },
): Promise<WebhookRow | undefined> {
  const rows = await db<WebhookRow[]>`
    INSERT INTO webhooks (id, account_id, url, events, secret_ciphertext, active, failure_count, created_at)
    VALUES (${w.id}, ${w.accountId}, ${w.url}, ${w.events}, ${w.secretCiphertext}, true, 0, ${w.createdAt})
    ON CONFLICT ON CONSTRAINT webhooks_account_url_key DO NOTHING
    RETURNING ${db.unsafe(COLUMNS)}`;
  return rows[0];
}

/** How many webhooks the account has. */
export async function countWebhooks(db: Db, accountId: string): Promise<number> {
  const rows = await db<{ n: number }[]>`SELECT count(*)::int AS n FROM webhooks WHERE account_id = ${accountId}`;
  return rows[0]!.n;
}

/** Whether the account has a webhook with this URL, other than `exceptId`. */
export async function urlTaken(db: Db, accountId: string, url: string, exceptId = ""): Promise<boolean> {
  const rows = await db`SELECT 1 FROM webhooks WHERE account_id = ${accountId} AND url = ${url} AND id <> ${exceptId}`;
  return rows.length > 0;
}

/**
 * The account's webhooks, oldest first, with the list form's columns only:
 * the columns written out rather than a `db.unsafe` fragment, which cost a
 * query object of its own on every call of the API's hottest read, and none
 * of the ciphertexts or failure fields the list never shows. With the scope
 * check's memo, CPU per request of the list in process went from 41.3 to
 * 37.5 us (tests/bench/api_in_process.ts, medians of five runs of 20,000).
 */
export async function listWebhooks(db: Db, accountId: string): Promise<WebhookSummaryRow[]> {
  return await db<WebhookSummaryRow[]>`
    SELECT id, url, events, active, failure_count, last_triggered_at, created_at
    FROM webhooks WHERE account_id = ${accountId} ORDER BY created_at, id`;
}

/** One of the account's webhooks. */
export async function findWebhook(db: Db, accountId: string, id: string): Promise<WebhookRow | undefined> {
  const rows = await db<WebhookRow[]>`
    SELECT ${db.unsafe(COLUMNS)} FROM webhooks WHERE id = ${id} AND account_id = ${accountId}`;
  return rows[0];
}

/** The changes a PATCH may make; absent fields stay as they are. */
export interface WebhookChanges {
  url?: string;
  events?: EventType[];
  /** `null` removes the secret. */
  secretCiphertext?: string | null;
  active?: boolean;
}

/** A webhook as a PATCH left it, and whether it was active before. */
export interface UpdatedWebhook {
  url: string;
  active: boolean;
  wasActive: boolean;
}

/** Applies changes to one of the account's webhooks; undefined when there is none. */
export async function updateWebhook(
  db: Db,
  accountId: string,
  id: string,
  c: WebhookChanges,
): Promise<UpdatedWebhook | undefined> {
  // Enabling always resets the failure count (spec 3.1), even when already active. A new secret (or none)
  // replaces the current one at once and ends a rotation's overlap: the replaced secret no longer signs.
  const secret = c.secretCiphertext !== undefined;
  const rows = await db<UpdatedWebhook[]>`
    UPDATE webhooks w SET
      url = COALESCE(${c.url ?? null}, w.url),
      events = COALESCE(${c.events ?? null}::text[], w.events),
      secret_ciphertext = CASE WHEN ${secret} THEN ${c.secretCiphertext ?? null} ELSE w.secret_ciphertext END,
      previous_secret_ciphertext = CASE WHEN ${secret} THEN NULL ELSE w.previous_secret_ciphertext END,
      previous_secret_expires_at = CASE WHEN ${secret} THEN NULL ELSE w.previous_secret_expires_at END,
      active = COALESCE(${c.active ?? null}::boolean, w.active),
      failure_count = CASE WHEN ${c.active === true} THEN 0 ELSE w.failure_count END
    FROM (
      -- The row as it was: the UPDATE's RETURNING sees only the new one.
      SELECT o.id, o.active FROM webhooks o WHERE o.id = ${id} AND o.account_id = ${accountId} FOR NO KEY UPDATE
    ) old
    WHERE w.id = old.id
    RETURNING w.url, w.active, old.active AS was_active`;
  return rows[0];
}

/**
 * Replaces the webhook's secret with `secretCiphertext`, the one it replaces
 * signing beside it until `overlapUntil` (not at all when that is not after
 * `now`); a rotation during an overlap ends it, as the replaced secret is the
 * only previous one kept. Returns whether there was a secret to keep (so an
 * overlap), or undefined when the account has no such webhook.
 */
export async function rotateSecret(
  db: Db,
  accountId: string,
  id: string,
  secretCiphertext: string,
  now: Date,
  overlapUntil: Date,
): Promise<{ hadSecret: boolean } | undefined> {
  const overlap = overlapUntil > now;
  const rows = await db<{ hadSecret: boolean }[]>`
    UPDATE webhooks w SET
      secret_ciphertext = ${secretCiphertext},
      previous_secret_ciphertext = CASE WHEN ${overlap} THEN old.secret_ciphertext END,
      previous_secret_expires_at = CASE WHEN ${overlap} AND old.secret_ciphertext IS NOT NULL
                                   THEN ${overlapUntil}::timestamptz END
    FROM (
      -- The secret being replaced (locked: a concurrent rotation replaces the one this one stored).
      SELECT o.id, o.secret_ciphertext FROM webhooks o WHERE o.id = ${id} AND o.account_id = ${accountId}
      FOR NO KEY UPDATE
    ) old
    WHERE w.id = old.id
    RETURNING old.secret_ciphertext IS NOT NULL AS had_secret`;
  return rows[0];
}

/**
 * Forgets the previous secrets whose overlap ended at or before `now`: a
 * replaced secret is kept, encrypted, only while it signs. Returns how many.
 */
export async function dropEndedOverlaps(db: Db, now: Date): Promise<number> {
  // webhooks_previous_secret_idx: only the webhooks in an overlap are read.
  const rows = await db`
    UPDATE webhooks SET previous_secret_ciphertext = NULL, previous_secret_expires_at = NULL
    WHERE previous_secret_expires_at <= ${now}
    RETURNING id`;
  return rows.length;
}

/** Deletes one of the account's webhooks; false when there is none. */
export async function deleteWebhook(db: Db, accountId: string, id: string): Promise<boolean> {
  const rows = await db`DELETE FROM webhooks WHERE id = ${id} AND account_id = ${accountId} RETURNING id`;
  return rows.length > 0;
}
