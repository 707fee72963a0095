/** SQL of user webhooks. */
import type { Db } from "../db/client.ts";
import type { EventType, WebhookRow } from "./schemas.ts";

const COLUMNS = "id, account_id, url, events, secret_ciphertext, active, failure_count, last_triggered_at, " +
  "last_failure_at, last_failure_reason, created_at";

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

/** The account's webhooks, oldest first. */
export async function listWebhooks(db: Db, accountId: string): Promise<WebhookRow[]> {
  return await db<WebhookRow[]>`
    SELECT ${db.unsafe(COLUMNS)} FROM webhooks WHERE account_id = ${accountId} ORDER BY created_at, id`;
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

/** Applies changes to one of the account's webhooks; false when there is none. */
export async function updateWebhook(db: Db, accountId: string, id: string, c: WebhookChanges): Promise<boolean> {
  // Enabling always resets the failure count (spec 3.1), even when already active.
  const rows = await db`
    UPDATE webhooks SET
      url = COALESCE(${c.url ?? null}, url),
      events = COALESCE(${c.events ?? null}::text[], events),
      secret_ciphertext = CASE WHEN ${c.secretCiphertext !== undefined} THEN ${c.secretCiphertext ?? null}
                          ELSE secret_ciphertext END,
      active = COALESCE(${c.active ?? null}::boolean, active),
      failure_count = CASE WHEN ${c.active === true} THEN 0 ELSE failure_count END
    WHERE id = ${id} AND account_id = ${accountId}
    RETURNING id`;
  return rows.length > 0;
}

/** Deletes one of the account's webhooks; false when there is none. */
export async function deleteWebhook(db: Db, accountId: string, id: string): Promise<boolean> {
  const rows = await db`DELETE FROM webhooks WHERE id = ${id} AND account_id = ${accountId} RETURNING id`;
  return rows.length > 0;
}
