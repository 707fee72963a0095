/**
 * SQL of the delivery queue. Claims are batched and leased: FOR UPDATE SKIP
 * LOCKED lets instances share the table without waiting on each other, and a
 * lease lets a crashed instance's work be claimed again.
 */
import type { Db, Tx } from "../db/client.ts";

/** A claimed attempt, with what sending it needs. */
export interface ClaimedDelivery {
  id: string;
  eventId: string;
  webhookId: string;
  accountId: string;
  attempt: number;
  eventType: string;
  payload: string;
  url: string;
  secretCiphertext: string | null;
  /** Until when the claim is this worker's; after it another worker may take the attempt over. */
  leaseUntil: Date;
}

/** A due attempt locked by a claim, and whether its webhook is still active. */
export interface DueAttempt {
  id: string;
  eventId: string;
  webhookId: string;
  active: boolean;
}

/** How many attempts may be in flight at once, over all instances. */
export interface Caps {
  /** Of one event (spec 6.3: 3). */
  perTrigger: number;
  /** To one webhook: a hanging receiver cannot take every slot. */
  perWebhook: number;
  /** Of one account, at most, whatever its share. */
  perAccount: number;
  /**
   * The slots shared between accounts (one instance's concurrency). An account
   * may hold at most half of what the other accounts leave of them: alone it
   * gets half, a second hanging tenant a quarter, a third an eighth, so a
   * newcomer always finds free slots; as attempts finish, the shares even out
   * to slots / (k + 1) for k accounts. Never less than 1.
   */
  slots: number;
}

/**
 * First statement of a claim. Due pending attempts, oldest first, locked for
 * this transaction (SKIP LOCKED: another instance's claim takes other rows),
 * leaving out those that cannot be sent now: attempts of events, webhooks and
 * accounts already at their cap or share. Without that, the oldest rows, held
 * back by a cap (say, one tenant's events whose receivers hang), would be
 * chosen again and again while a due attempt of another tenant behind them
 * waited for those receivers to time out. The accounts of the chosen rows are
 * locked too, in id order (so claims locking overlapping sets do not
 * deadlock): no other instance counts or adds in-flight attempts of these
 * accounts, and so of their webhooks and events, until this claim commits.
 * The caps are counted exactly by the next statement, which sees what the
 * holders of those locks committed (a statement's snapshot is taken when it
 * starts). NO KEY UPDATE does not block the foreign-key checks of inserts.
 */
export async function lockDue(tx: Tx, now: Date, limit: number, caps: Caps): Promise<DueAttempt[]> {
  // The in-flight rows are few (bounded by every instance's concurrency), so
  // counting them per event, webhook and account costs little; the due scan
  // walks deliveries_due_order_idx and stops at `limit` rows. An account is
  // full here at half of what the others leave, the most the next statement
  // allows (it divides by more when a claim takes rows of several accounts).
  return await tx<DueAttempt[]>`
    WITH flying AS MATERIALIZED (
      SELECT f.event_id, f.webhook_id, w.account_id FROM deliveries f JOIN webhooks w ON w.id = f.webhook_id
      WHERE f.status = 'in_flight' AND f.lease_until > ${now}
    ), held AS MATERIALIZED (
      SELECT account_id, count(*) AS n, (sum(count(*)) OVER ())::int AS total FROM flying GROUP BY account_id
    ), full_events AS (
      SELECT event_id FROM flying GROUP BY event_id HAVING count(*) >= ${caps.perTrigger}
    ), full_webhooks AS (
      SELECT webhook_id FROM flying GROUP BY webhook_id HAVING count(*) >= ${caps.perWebhook}
      UNION
      SELECT w.id FROM webhooks w JOIN held h ON h.account_id = w.account_id
      WHERE h.n >= LEAST(${caps.perAccount}, GREATEST(1, (${caps.slots}::int - (h.total - h.n)) / 2))
    ), due AS MATERIALIZED (
      SELECT id, event_id, webhook_id, run_at FROM deliveries
      WHERE status = 'pending' AND run_at <= ${now}
        AND event_id NOT IN (SELECT event_id FROM full_events)
        AND webhook_id NOT IN (SELECT webhook_id FROM full_webhooks)
      ORDER BY run_at, id
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    ), locked_accounts AS MATERIALIZED (
      SELECT id FROM accounts
      WHERE id IN (SELECT w.account_id FROM due JOIN webhooks w ON w.id = due.webhook_id)
      ORDER BY id FOR NO KEY UPDATE
    )
    SELECT due.id, due.event_id, due.webhook_id, w.active, (SELECT count(*) FROM locked_accounts) AS locked_accounts
    FROM due JOIN webhooks w ON w.id = due.webhook_id
    ORDER BY due.run_at, due.id`;
}

export async function cancelAttempts(tx: Tx, ids: string[], now: Date): Promise<void> {
  await tx`UPDATE deliveries SET status = 'cancelled', finished_at = ${now} WHERE id = ANY(${ids})`;
}

/**
 * Second statement of a claim: of the attempts `ids` (locked by `lockDue`,
 * oldest first), marks in flight under this worker's lease those that fit
 * every cap, counting what is in flight now over all instances, and returns
 * what sending them needs. Ranks are counted per account first, then per
 * webhook among the rows that fit their account, then per event among the
 * rows that fit both; a row a later cap holds back may still have taken an
 * earlier rank, so the caps are never exceeded, at worst a little
 * under-filled until the next claim.
 */
export async function markInFlightWithinCaps(
  tx: Tx,
  ids: string[],
  caps: Caps,
  now: Date,
  worker: string,
  leaseUntil: Date,
): Promise<ClaimedDelivery[]> {
  if (ids.length === 0) return [];
  return await tx<ClaimedDelivery[]>`
    WITH due AS (
      -- By primary key (a join with unnest() was planned as a scan of the table).
      SELECT d.id, d.event_id, d.webhook_id, w.account_id, array_position(${ids}::text[], d.id) AS ord
      FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
      WHERE d.id = ANY(${ids}::text[]) AND d.status = 'pending'
    ), held AS MATERIALIZED (
      SELECT fw.account_id, count(*) AS n FROM deliveries f JOIN webhooks fw ON fw.id = f.webhook_id
      WHERE f.status = 'in_flight' AND f.lease_until > ${now}
      GROUP BY fw.account_id
    ), shares AS (
      -- What the other accounts leave of the slots, split between the
      -- accounts of this claim and one more (see Caps.slots).
      SELECT a.account_id, COALESCE(h.n, 0) AS held, LEAST(${caps.perAccount}, GREATEST(1,
        (${caps.slots}::int - ((SELECT COALESCE(sum(n), 0)::int FROM held) - COALESCE(h.n, 0)))
          / ((SELECT count(DISTINCT account_id) FROM due) + 1))) AS share
      FROM (SELECT DISTINCT account_id FROM due) a LEFT JOIN held h ON h.account_id = a.account_id
    ), fit_account AS (
      SELECT due.*, s.share, row_number() OVER (PARTITION BY due.account_id ORDER BY due.ord) + s.held AS slot
      FROM due JOIN shares s ON s.account_id = due.account_id
    ), fit_webhook AS (
      SELECT fa.id, fa.event_id, fa.webhook_id, fa.ord, row_number() OVER (PARTITION BY fa.webhook_id ORDER BY fa.ord) + (
        SELECT count(*) FROM deliveries f
        WHERE f.webhook_id = fa.webhook_id AND f.status = 'in_flight' AND f.lease_until > ${now}
      ) AS slot
      FROM fit_account fa WHERE fa.slot <= fa.share
    ), fit_all AS (
      SELECT fw.id, row_number() OVER (PARTITION BY fw.event_id ORDER BY fw.ord) + (
        SELECT count(*) FROM deliveries f
        WHERE f.event_id = fw.event_id AND f.status = 'in_flight' AND f.lease_until > ${now}
      ) AS slot
      FROM fit_webhook fw WHERE fw.slot <= ${caps.perWebhook}
    )
    -- The URL is the attempt's from here on: the log shows where it went, whatever the webhook's URL later.
    UPDATE deliveries d SET status = 'in_flight', claimed_by = ${worker}, lease_until = ${leaseUntil}, url = w.url
    FROM fit_all c, events e, webhooks w
    WHERE c.slot <= ${caps.perTrigger} AND d.id = c.id AND e.id = d.event_id AND w.id = d.webhook_id
    RETURNING d.id, d.event_id, d.webhook_id, w.account_id, d.attempt, e.type AS event_type, e.payload,
      w.url, w.secret_ciphertext, d.lease_until`;
}

/** Returns in-flight attempts whose lease ran out to the queue (their worker died). */
export async function requeueExpiredLeases(db: Db, now: Date): Promise<number> {
  const rows = await db`
    UPDATE deliveries SET status = 'pending', claimed_by = NULL, lease_until = NULL
    WHERE status = 'in_flight' AND lease_until < ${now}
    RETURNING id`;
  return rows.length;
}

/** Releases this worker's unfinished claims (graceful shutdown). */
export async function releaseClaims(db: Db, worker: string, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await db`
    UPDATE deliveries SET status = 'pending', claimed_by = NULL, lease_until = NULL
    WHERE id = ANY(${ids}) AND status = 'in_flight' AND claimed_by = ${worker}`;
}

/** When the queue next has something to do: the earliest due retry or lease expiry. */
export async function nextWakeAt(db: Db): Promise<Date | null> {
  const rows = await db<{ at: Date | null }[]>`
    SELECT LEAST(
      (SELECT min(run_at) FROM deliveries WHERE status = 'pending'),
      (SELECT min(lease_until) FROM deliveries WHERE status = 'in_flight')
    ) AS at`;
  return rows[0]?.at ?? null;
}

/** The outcome of one attempt, as recorded. */
export interface AttemptResult {
  id: string;
  worker: string;
  responseStatus: number | null;
  durationMs: number;
  error: string | null;
  /** The start of the receiver's answer (the log keeps it); null when there was none. */
  responseBody: string | null;
  finishedAt: Date;
}

/**
 * Records successes of one worker in one statement (one round trip, atomic),
 * for the group commit of `success_writer.ts`: the attempts are closed and
 * their webhooks' runs of failures end, each webhook's `last_triggered_at`
 * becoming its latest success of the batch. Returns the ids this worker still
 * held; the others' leases ran out and another worker took them over.
 */
export async function recordSuccesses(db: Db, worker: string, results: AttemptResult[]): Promise<Set<string>> {
  if (results.length === 0) return new Set();
  const rows = await db<{ id: string }[]>`
    WITH r AS (
      SELECT * FROM unnest(
        ${results.map((r) => r.id)}::text[],
        ${results.map((r) => String(r.responseStatus))}::int[],
        ${results.map((r) => String(r.durationMs))}::int[],
        ${results.map((r) => r.finishedAt.toISOString())}::timestamptz[],
        ${results.map((r) => r.responseBody)}::text[]
      ) AS r(id, response_status, duration_ms, finished_at, response_body)
    ), d AS (
      UPDATE deliveries SET status = 'succeeded', response_status = r.response_status, duration_ms = r.duration_ms,
        error = NULL, finished_at = r.finished_at, lease_until = NULL, response_body = r.response_body
      FROM r
      WHERE deliveries.id = r.id AND deliveries.status = 'in_flight' AND deliveries.claimed_by = ${worker}
      RETURNING deliveries.id, deliveries.webhook_id, r.finished_at
    ), w AS (
      UPDATE webhooks SET last_triggered_at = latest.at, failure_count = 0
      FROM (SELECT webhook_id, max(finished_at) AS at FROM d GROUP BY webhook_id) latest
      WHERE webhooks.id = latest.webhook_id
    )
    SELECT id FROM d`;
  return new Set(rows.map((r) => r.id));
}

/** What recording a failure did. */
export type FailureRecorded = "lost" | "disabled" | "retry_scheduled" | "failed_final";

/**
 * Records a failure in one statement (one round trip, atomic): closes the
 * attempt, counts the failure on the webhook and disables it at the
 * `disableAfter`-th consecutive one (cancelling its pending attempts), or
 * else queues the retry when there is one.
 */
export async function recordFailure(
  db: Db,
  r: AttemptResult,
  disableAfter: number,
  retry: { id: string; runAt: Date } | undefined,
): Promise<FailureRecorded> {
  const rows = await db<
    { held: number; active: boolean | null; failures: number | null; webhookId: string | null }[]
  >`
    WITH d AS (
      UPDATE deliveries SET status = 'failed', response_status = ${r.responseStatus}, duration_ms = ${r.durationMs},
        error = ${r.error}, finished_at = ${r.finishedAt}, lease_until = NULL, response_body = ${r.responseBody}
      WHERE id = ${r.id} AND status = 'in_flight' AND claimed_by = ${r.worker}
      RETURNING webhook_id, event_id, attempt
    ), w AS (
      UPDATE webhooks SET last_triggered_at = ${r.finishedAt}, failure_count = failure_count + 1,
        last_failure_at = ${r.finishedAt}, last_failure_reason = ${r.error},
        active = active AND failure_count + 1 < ${disableAfter}
      WHERE id IN (SELECT webhook_id FROM d)
      RETURNING id, active, failure_count
    ), cancelled AS (
      UPDATE deliveries SET status = 'cancelled', finished_at = ${r.finishedAt}
      WHERE status = 'pending' AND webhook_id IN (SELECT id FROM w WHERE NOT active)
    ), retried AS (
      INSERT INTO deliveries (id, event_id, webhook_id, attempt, status, run_at, created_at)
      SELECT ${retry?.id ?? ""}, d.event_id, d.webhook_id, d.attempt + 1, 'pending', ${retry?.runAt ?? r.finishedAt},
        ${r.finishedAt}
      FROM d JOIN w ON w.id = d.webhook_id
      WHERE w.active AND ${retry !== undefined}
    )
    SELECT (SELECT count(*)::int FROM d) AS held, (SELECT active FROM w) AS active,
      (SELECT failure_count FROM w) AS failures, (SELECT webhook_id FROM d) AS webhook_id`;
  const { held, active, failures, webhookId } = rows[0]!;
  if (held === 0) return "lost";
  if (active === false) {
    // Again, in a statement of its own: the CTE above saw the table as it was
    // when it started, so a retry that a concurrent failure of the same
    // webhook committed meanwhile (it held the webhook row first) would stay
    // pending. A fresh snapshot now sees it; later failures see active=false
    // and queue no retry.
    await cancelPendingForWebhook(db, webhookId!, r.finishedAt);
    // Only the failure that reached the limit disabled it: a later one (an
    // attempt that was in flight meanwhile) or one on a webhook its owner
    // disabled has no retry, and is no news.
    return failures === disableAfter ? "disabled" : "failed_final";
  }
  return retry && active ? "retry_scheduled" : "failed_final";
}

/** Cancels a webhook's pending attempts (it was disabled). */
export async function cancelPendingForWebhook(tx: Db, webhookId: string, at: Date): Promise<void> {
  await tx`
    UPDATE deliveries SET status = 'cancelled', finished_at = ${at}
    WHERE webhook_id = ${webhookId} AND status = 'pending'`;
}

/**
 * Queues first attempts (pending, due at their `runAt`) and the NOTIFY that
 * wakes every instance's queue when the transaction commits: one statement
 * for any number of events and webhooks.
 */
export async function insertPending(
  tx: Tx,
  attempts: { id: string; eventId: string; webhookId: string; runAt: Date }[],
  channel: string,
): Promise<void> {
  await tx`
    WITH queued AS (
      INSERT INTO deliveries (id, event_id, webhook_id, attempt, status, run_at, created_at)
      SELECT a.id, a.event_id, a.webhook_id, 1, 'pending', a.run_at, a.run_at
      FROM unnest(
        ${attempts.map((a) => a.id)}::text[],
        ${attempts.map((a) => a.eventId)}::text[],
        ${attempts.map((a) => a.webhookId)}::text[],
        ${attempts.map((a) => a.runAt.toISOString())}::timestamptz[]
      ) AS a (id, event_id, webhook_id, run_at)
      RETURNING 1
    )
    -- NOTIFY is transactional: listeners hear it only if and when this commits.
    SELECT pg_notify(${channel}, '') FROM (SELECT count(*) FROM queued) done`;
}

/** Wakes the delivery queue of every listening instance, once the transaction commits. */
export async function notifyQueued(tx: Tx, channel: string): Promise<void> {
  // NOTIFY is transactional: listeners hear it only if and when this commits.
  await tx`SELECT pg_notify(${channel}, '')`;
}

/** A row of the delivery log. */
export interface DeliveryLogRow {
  id: string;
  eventId: string;
  eventType: string;
  attempt: number;
  status: "pending" | "in_flight" | "succeeded" | "failed" | "cancelled";
  responseStatus: number | null;
  durationMs: number | null;
  error: string | null;
  /** Where the attempt went; null until it is claimed for sending. */
  url: string | null;
  /** The event's payload: the exact body every attempt of the event sends and signs. */
  requestBody: string;
  responseBody: string | null;
  /** When a pending attempt is due; null in any other status. */
  nextAttemptAt: Date | null;
  createdAt: Date;
}

/** The delivery log's columns, of `deliveries d JOIN events e`. */
const LOG_COLUMNS = `d.id, d.event_id, e.type AS event_type, d.attempt, d.status, d.response_status, d.duration_ms,
  d.error, d.url, e.payload AS request_body, d.response_body,
  CASE WHEN d.status = 'pending' THEN d.run_at END AS next_attempt_at, d.created_at`;

/** A webhook's attempts, newest first, after the cursor position (createdAt, seq). */
export async function listAttempts(
  db: Db,
  webhookId: string,
  limit: number,
  after: { createdAt: Date; seq: string } | undefined,
): Promise<(DeliveryLogRow & { seq: string })[]> {
  return await db<(DeliveryLogRow & { seq: string })[]>`
    SELECT d.seq, ${db.unsafe(LOG_COLUMNS)}
    FROM deliveries d JOIN events e ON e.id = d.event_id
    WHERE d.webhook_id = ${webhookId}
      ${after ? db`AND (d.created_at, d.seq) < (${after.createdAt}, ${after.seq}::bigint)` : db``}
    ORDER BY d.created_at DESC, d.seq DESC
    LIMIT ${limit}`;
}

/** One attempt of a webhook, for redelivery. */
export async function findAttempt(
  db: Db,
  webhookId: string,
  id: string,
): Promise<{ id: string; eventId: string } | undefined> {
  const rows = await db<{ id: string; eventId: string }[]>`
    SELECT id, event_id FROM deliveries WHERE id = ${id} AND webhook_id = ${webhookId}`;
  return rows[0];
}

/** Deletes finished attempts older than the retention, then events left with none. */
export async function purgeOld(db: Db, before: Date): Promise<number> {
  const rows = await db`
    DELETE FROM deliveries WHERE finished_at IS NOT NULL AND finished_at < ${before} RETURNING id`;
  return rows.length;
}

/** How much work is outstanding: pending attempts and the age of the oldest due one. */
export async function queueStats(db: Db, now: Date): Promise<{ pending: number; oldestDueSeconds: number }> {
  const rows = await db<{ pending: number; oldest: Date | null }[]>`
    SELECT count(*)::int AS pending, min(run_at) FILTER (WHERE run_at <= ${now}) AS oldest
    FROM deliveries WHERE status = 'pending'`;
  const r = rows[0]!;
  return {
    pending: r.pending,
    oldestDueSeconds: r.oldest ? Math.max(0, (now.getTime() - r.oldest.getTime()) / 1000) : 0,
  };
}

/** One attempt as the log shows it. */
export async function findLogRow(db: Db, id: string): Promise<DeliveryLogRow | undefined> {
  const rows = await db<DeliveryLogRow[]>`
    SELECT ${db.unsafe(LOG_COLUMNS)}
    FROM deliveries d JOIN events e ON e.id = d.event_id
    WHERE d.id = ${id}`;
  return rows[0];
}
