/**
 * SQL of the delivery queue. Claims are batched, and one instance at a time
 * sends an account's attempts under a lease (`delivery_owners`): instances
 * share the table without waiting on each other, and a crashed instance's
 * accounts are taken over once its lease runs out.
 */
import type { Db, Fragment } from "../db/client.ts";
import { type Relation, relation } from "../db/relation.ts";
import type { AppendedColumns, EmittedEvent } from "../events/repo.ts";
import { type Caps, type Exchange, fitCaps } from "./caps.ts";

export type { Caps, Exchange };

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
  /**
   * The secret a rotation replaced, while its overlap lasts at the claim
   * (null otherwise): the attempt is signed with it too, after the current one.
   */
  previousSecretCiphertext: string | null;
  /**
   * Until when the attempt's account is this worker's (renewed by the
   * heartbeat); after it another worker may take the attempt over.
   */
  leaseUntil: Date;
}

/**
 * How far into the head of the due order a claim scans before it looks
 * webhook by webhook (`sql/claim.sql`): rows there held back by a cap are
 * skipped at about 1 us each, so the window costs well under a millisecond.
 */
export const DUE_WINDOW = 512;

/** What one claim did: the attempts it took, and those it read and held back or cancelled. */
export interface Claim {
  claimed: ClaimedDelivery[];
  /** Due attempts read that a cap held back, or whose account another instance holds (the queue claims again soon). */
  heldBack: number;
  /** Attempts of webhooks disabled since they were queued, cancelled instead of sent. */
  cancelled: number;
  /**
   * When the earliest hold ends of the webhooks that a receiver's Retry-After
   * holds (none of their attempts is claimed until then) and that have
   * attempts due; undefined when none has.
   */
  heldUntil: Date | undefined;
  /**
   * Where the next claim may start its scans of the due order (`DueFloor`):
   * the oldest attempt due that this one found, or its `now` when none.
   */
  floor: DueFloor | undefined;
}

/**
 * A place in the due order (run_at, then id) before which a claim looks at
 * nothing: no attempt was pending there when the claim that gave it ran.
 */
export interface DueFloor {
  runAt: Date;
  id: string;
}

type ClaimRow = Omit<ClaimedDelivery, "id"> & {
  id: string | null;
  heldBack: number | null;
  cancelled: number | null;
  heldUntil: Date | null;
  floorAt: Date | null;
  floorId: string | null;
};

/**
 * One claim, one round trip: the stored function `deliveries_reserve`
 * (`sql/claim.sql`) reads up to `limit` due attempts that can be sent now
 * (never those of a webhook a receiver holds, nor those of `held`, the
 * attempts this process has not finished), cancels those of disabled
 * webhooks, takes their accounts (none of whose attempts another instance
 * sends meanwhile) until `leaseUntil`, and returns them, with a last row that
 * counts what it held back (with what belongs to an account another instance
 * holds) and says when the earliest hold ends. Of those, this returns the
 * ones within every cap, counted from `flying` (this instance's exchanges
 * under way), and counts the others as held back. It writes nothing to the
 * attempts: they stay pending until their results are recorded, and this
 * process passes them as `held` until then. With `floor`, its scans of the
 * due order start there (`sql/claim.sql`: past the dead entries that
 * finished attempts leave until a VACUUM).
 *
 * The caps are counted here rather than in the SQL: ranking the rows per
 * account, webhook and event there took about half of a claim's time in
 * PostgreSQL (2.2 to 2.7 ms of about 5 for 50 rows, pg_stat_statements while
 * draining), where the same count costs microseconds here.
 */
export async function claim(
  db: Db,
  now: Date,
  limit: number,
  caps: Caps,
  worker: string,
  leaseUntil: Date,
  flying: readonly Exchange[],
  held: readonly string[] = [],
  floor?: DueFloor,
): Promise<Claim> {
  const rows = await db<ClaimRow[]>`
    SELECT * FROM deliveries_reserve(${now}, ${limit}, ${caps.perEvent}, ${caps.perWebhook}, ${caps.perAccount},
      ${caps.slots}, ${worker}, ${leaseUntil}, ${DUE_WINDOW}, ${flying.map((f) => f.eventId)}::text[],
      ${flying.map((f) => f.webhookId)}::text[], ${flying.map((f) => f.accountId)}::text[], ${held}::text[],
      ${floor?.runAt ?? null}::timestamptz, ${floor?.id ?? null}::text)`;
  const last = rows.at(-1);
  const read = rows.filter((r) => r.id !== null) as ClaimedDelivery[];
  const claimed = fitCaps(read, flying, caps);
  return {
    claimed,
    heldBack: (last?.heldBack ?? 0) + read.length - claimed.length,
    cancelled: last?.cancelled ?? 0,
    heldUntil: last?.heldUntil ?? undefined,
    floor: last?.floorAt ? { runAt: last.floorAt, id: last.floorId ?? "" } : undefined,
  };
}

/** An attempt this process holds, as the heartbeat renews it. */
export interface HeldAttempt {
  id: string;
  accountId: string;
  /** Its URL, written on the row when it is marked in flight. */
  url: string;
  /** Whether its row is to be in flight under this worker (its exchange has been under way for a while). */
  mark?: boolean;
}

/**
 * The heartbeat of `lease_keeper.ts`: extends this worker's leases on the
 * accounts of the attempts it holds (`delivery_owners`, taken as a claim
 * takes them: `deliveries_take_accounts`, `sql/claim.sql`), and marks in
 * flight, under the same lease, the attempts to `mark` (or extends the lease
 * of those marked before). Returns the attempts it still holds: those of the
 * accounts it holds, and of those to mark, the ones it marked. An attempt of
 * an account another instance took over (this one's lease on it ran out), or
 * to mark but recorded meanwhile, is not held, so it is stopped: one instance
 * at a time sends an account's attempts. One statement for every attempt of
 * the process, by primary key.
 */
export async function renewLeases(
  db: Db,
  worker: string,
  held: readonly HeldAttempt[],
  now: Date,
  until: Date,
): Promise<Set<string>> {
  if (held.length === 0) return new Set();
  const marks = held.filter((h) => h.mark);
  const rows = await db<{ id: string; account: boolean }[]>`
    WITH owned AS MATERIALIZED (
      SELECT deliveries_take_accounts(${held.map((h) => h.accountId)}::text[], ${worker}, ${now}, ${until}) AS a
    ), marked AS (
      UPDATE deliveries d SET status = 'in_flight', claimed_by = ${worker}, lease_until = ${until}, url = m.url
      FROM unnest(${marks.map((h) => h.id)}::text[], ${marks.map((h) => h.url)}::text[]) AS m(id, url), webhooks w
      WHERE d.id = m.id AND w.id = d.webhook_id AND w.account_id IN (SELECT a FROM owned)
        AND (d.status IN ('pending', 'cancelled') OR d.status = 'in_flight' AND d.claimed_by = ${worker})
      RETURNING d.id
    )
    SELECT a AS id, true AS account FROM owned UNION ALL SELECT id, false FROM marked`;
  const accounts = new Set(rows.filter((r) => r.account).map((r) => r.id));
  const marked = new Set(rows.filter((r) => !r.account).map((r) => r.id));
  return new Set(held.filter((h) => h.mark ? marked.has(h.id) : accounts.has(h.accountId)).map((h) => h.id));
}

/**
 * Returns in-flight attempts whose lease ran out to the queue (their worker
 * died), and forgets the accounts whose holder's lease ran out (a claim may
 * take them again); returns how many attempts it requeued.
 */
export async function requeueExpiredLeases(db: Db, now: Date): Promise<number> {
  const rows = await db`
    WITH forgotten AS (DELETE FROM delivery_owners WHERE lease_until < ${now})
    UPDATE deliveries SET status = 'pending', claimed_by = NULL, lease_until = NULL
    WHERE status = 'in_flight' AND lease_until < ${now}
    RETURNING id`;
  return rows.length;
}

/**
 * Graceful shutdown: puts this worker's attempts `ids` that the heartbeat
 * marked in flight back in the queue, unsent (the others are pending still),
 * and lets go of every account it holds, so that another instance takes them
 * at once.
 */
export async function releaseClaims(db: Db, worker: string, ids: string[]): Promise<void> {
  await db`
    WITH released AS (
      UPDATE deliveries SET status = 'pending', claimed_by = NULL, lease_until = NULL
      WHERE id = ANY(${ids}) AND status = 'in_flight' AND claimed_by = ${worker}
    )
    DELETE FROM delivery_owners WHERE worker = ${worker}`;
}

/**
 * When the queue next has something to do: the earliest due retry or lease
 * expiry. With `dueAfter` (a claim at that time found attempts due that a
 * receiver's hold keeps back), only attempts due after it count: those due
 * before are held, or another instance's claim has them, and the head of the
 * due order may be a held webhook's backlog that would otherwise wake the
 * queue at once, again and again, until the hold ends.
 */
export async function nextWakeAt(db: Db, dueAfter?: Date): Promise<Date | null> {
  // The first row of each index's order (deliveries_due_order_idx,
  // deliveries_lease_idx), not min(): with the statistics of a queue table
  // (always behind), the planner computed min(run_at) by reading every
  // pending attempt through another index, 3 to 4 ms with 4,000 to 6,000
  // pending (PostgreSQL 15, auto_explain), at every idle tick of the queue.
  const rows = await db<{ at: Date | null }[]>`
    SELECT LEAST(
      (SELECT run_at FROM deliveries WHERE status = 'pending'
        ${dueAfter === undefined ? db`` : db`AND run_at > ${dueAfter}`}
        ORDER BY run_at, id LIMIT 1),
      (SELECT lease_until FROM deliveries WHERE status = 'in_flight' ORDER BY lease_until LIMIT 1)
    ) AS at`;
  return rows[0]?.at ?? null;
}

/** The outcome of one attempt, as recorded. */
export interface AttemptResult {
  id: string;
  worker: string;
  /** The URL the attempt was sent to (the log keeps it). */
  url: string;
  responseStatus: number | null;
  durationMs: number;
  error: string | null;
  /** The start of the receiver's answer (the log keeps it); null when there was none. */
  responseBody: string | null;
  finishedAt: Date;
}

/** What recording a result did; "lost" when the attempt was no longer this worker's (its lease ran out). */
export type Recorded = "succeeded" | "lost" | "disabled" | "retry_scheduled" | "failed_final";

/** A success to record. */
export type SuccessToRecord = { ok: true; result: AttemptResult };

/** A failure to record: its retry when the schedule has one, a receiver's hold, and the event of a disabling. */
export type FailureToRecord = {
  ok: false;
  result: AttemptResult;
  retry: { id: string; runAt: Date } | undefined;
  /**
   * A receiver's 429 or 503 with Retry-After: until when no attempt of the
   * webhook is sent (the claim skips it). Undefined for none.
   */
  holdUntil?: Date | undefined;
  /**
   * The `webhook.disabled` event this failure announces, appended (with the
   * disabling, in its statement) only if recording it disables the webhook:
   * its `ref` is the attempt's id.
   */
  disabling: EmittedEvent;
};

/** An attempt's result to record. */
export type ResultToRecord = SuccessToRecord | FailureToRecord;

/**
 * The call of the stored function `deliveries_record_results`
 * (`sql/record_results.sql`), which records results of one worker as if one
 * after the other in the batch's order. It closes each attempt this worker
 * still holds; a success ends its webhook's run of failures, a failure counts
 * one more, disables the webhook at the `disableAfter`-th consecutive one
 * (cancelling its pending attempts) or else queues the retry when there is
 * one, and lengthens the webhook's hold to its own. One row per result: its
 * id and outcome.
 */
function recordCall(db: Db, worker: string, disableAfter: number, results: readonly ResultToRecord[]): Fragment {
  const failure = (r: ResultToRecord) => r.ok ? undefined : r;
  // The flags go as text: postgres.js sends an array of booleans as one boolean, which cannot be cast to an array.
  return db`deliveries_record_results(${worker}, ${disableAfter},
      ${results.map((r) => r.result.id)}::text[],
      ${results.map((r) => r.ok ? "t" : "f")}::text[]::boolean[],
      ${results.map((r) => r.result.responseStatus === null ? null : String(r.result.responseStatus))}::int[],
      ${results.map((r) => String(r.result.durationMs))}::int[],
      ${results.map((r) => r.result.error)}::text[],
      ${results.map((r) => r.result.finishedAt.toISOString())}::timestamptz[],
      ${results.map((r) => r.result.responseBody)}::text[],
      ${results.map((r) => failure(r)?.retry?.id ?? null)}::text[],
      ${results.map((r) => failure(r)?.retry?.runAt.toISOString() ?? null)}::timestamptz[],
      ${results.map((r) => failure(r)?.holdUntil?.toISOString() ?? null)}::timestamptz[],
      ${results.map((r) => r.result.url)}::text[])`;
}

/**
 * Records a batch of successes in one call: nothing in it can disable a
 * webhook, so there is no event to write with it. Returns what it did with
 * each, by id ("lost" ones are absent).
 */
export async function recordSuccesses(
  db: Db,
  worker: string,
  disableAfter: number,
  results: readonly SuccessToRecord[],
): Promise<Map<string, Recorded>> {
  if (results.length === 0) return new Map();
  const rows = await db<{ id: string; outcome: Recorded }[]>`
    SELECT * FROM ${recordCall(db, worker, disableAfter, results)}`;
  return new Map(rows.map((r) => [r.id, r.outcome]));
}

/**
 * A batch with failures as a change of the outbox's statement
 * (`Outbox.statement`): the CTE `recorded`, the function's call, comes first,
 * so its locks come before those of the events' writer; the ids of the
 * failures that disabled their webhook are `written`, which appends their
 * `disabling` events in the same statement; each row is a result's id and
 * outcome.
 */
export function recordResultsChange(
  db: Db,
  worker: string,
  disableAfter: number,
  results: readonly ResultToRecord[],
): { ctes: Fragment; written: Fragment; select: Fragment } {
  return {
    ctes: db`recorded AS MATERIALIZED (SELECT * FROM ${recordCall(db, worker, disableAfter, results)})`,
    written: db`SELECT recorded.id FROM recorded WHERE recorded.outcome = 'disabled'`,
    select: db`recorded.id, recorded.outcome FROM recorded`,
  };
}

/**
 * The CTE `queued`: one first attempt per event of `appended` and active
 * webhook of its account that subscribes to its type, pending, due when the
 * event was emitted, with an id made in the statement (`new_id`, one per
 * subscriber: only the statement knows how many), and the NOTIFY that wakes
 * every instance's queue when it commits.
 */
export function queueFirstAttemptsCte(
  db: Db,
  appended: Relation<AppendedColumns>,
  channel: string,
): { cte: Fragment; queued: Relation<"id"> } {
  return {
    cte: db`queued AS (
      INSERT INTO deliveries (id, event_id, webhook_id, attempt, status, run_at, created_at)
      SELECT new_id('dlv', ${appended.col("created_at")}), ${appended.col("id")}, w.id, 1, 'pending',
        ${appended.col("created_at")}, ${appended.col("created_at")}
      FROM ${appended.from}
      JOIN webhooks w ON w.account_id = ${appended.col("account_id")} AND w.active
        AND ${appended.col("type")} = ANY(w.events)
      -- NOTIFY is transactional: listeners hear it only if and when this commits (once, however many rows).
      RETURNING id, pg_notify(${channel}, '')
    )`,
    queued: relation(db, "queued"),
  };
}

/** Queues a new first attempt of an existing event to one webhook (a redelivery), and wakes every queue on commit. */
export async function insertRedelivery(
  db: Db,
  a: { id: string; eventId: string; webhookId: string; runAt: Date },
  channel: string,
): Promise<void> {
  await db`
    WITH queued AS (
      INSERT INTO deliveries (id, event_id, webhook_id, attempt, status, run_at, created_at)
      VALUES (${a.id}, ${a.eventId}, ${a.webhookId}, 1, 'pending', ${a.runAt}, ${a.runAt})
      RETURNING id
    )
    SELECT pg_notify(${channel}, '') FROM queued`;
}

/** The events a recover looks at: those created from `since` to `until`, both included. */
export interface RecoverWindow {
  since: Date;
  until: Date;
}

/**
 * The CTE `lost`: the events of the window whose latest attempt on the
 * webhook failed or was cancelled, numbered oldest first (`ord`, by the
 * events' creation, then their place in the log).
 */
function lostEventsCte(db: Db, webhookId: string, window: RecoverWindow): Fragment {
  // deliveries_log_idx: the webhook's attempts made since the window began, as no attempt of an event is made
  // before the event. "Latest" by `seq`, the order attempts were queued in, among the event's attempts
  // (deliveries_event_idx: a few rows, those of every webhook). The webhook is a FILTER, not a condition of that
  // lookup: as a condition, with statistics that had not seen the webhook's backlog, the planner intersected
  // the event's index with the whole webhook's for each attempt (5.5 s for 10,000, then 0.08 s).
  return db`lost AS MATERIALIZED (
    SELECT d.event_id, row_number() OVER (ORDER BY e.created_at, e.seq) AS ord, count(*) OVER () AS total
    FROM deliveries d JOIN events e ON e.id = d.event_id
    WHERE d.webhook_id = ${webhookId} AND d.created_at >= ${window.since}
      AND d.status IN ('failed', 'cancelled')
      AND e.created_at >= ${window.since} AND e.created_at <= ${window.until}
      AND d.seq = (
        SELECT max(x.seq) FILTER (WHERE x.webhook_id = d.webhook_id) FROM deliveries x WHERE x.event_id = d.event_id)
  )`;
}

/** How many attempts a recover of the window would queue for the webhook now (a dry run). */
export async function countLost(db: Db, webhookId: string, window: RecoverWindow): Promise<number> {
  const rows = await db<{ n: number }[]>`
    WITH ${lostEventsCte(db, webhookId, window)}
    SELECT count(*)::int AS n FROM lost`;
  return rows[0]!.n;
}

/**
 * Queues one new first attempt (a fresh retry schedule, as a redelivery) of
 * every event of the window whose latest attempt on the webhook failed or was
 * cancelled, all due at `now`, in the events' order: `run_at` steps by a
 * microsecond from one to the next, the newest event's at `now` (10,000
 * events span 10 ms before it), so the claim, which takes the due order
 * (run_at, id), sends the oldest first. One statement however many (ids made
 * in it by `new_id`), and the NOTIFY that wakes every instance's queue when
 * it commits. Returns how many it queued.
 */
export async function insertRecovered(
  db: Db,
  webhookId: string,
  window: RecoverWindow,
  now: Date,
  channel: string,
): Promise<number> {
  const rows = await db<{ n: number }[]>`
    WITH ${lostEventsCte(db, webhookId, window)}, queued AS (
      INSERT INTO deliveries (id, event_id, webhook_id, attempt, status, run_at, created_at)
      SELECT new_id('dlv', ${now}), l.event_id, ${webhookId}, 1, 'pending',
        ${now}::timestamptz - (l.total - l.ord) * interval '1 microsecond', ${now}
      FROM lost l
      -- NOTIFY is transactional, and one per channel and payload however many rows.
      RETURNING id, pg_notify(${channel}, '')
    )
    SELECT count(*)::int AS n FROM queued`;
  return rows[0]!.n;
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
  /** When a pending attempt is due (no earlier than the end of its webhook's hold); null in any other status. */
  nextAttemptAt: Date | null;
  createdAt: Date;
}

/**
 * The delivery log's columns, of `deliveries d JOIN events e JOIN webhooks w`.
 * A pending attempt is sent at its run_at, or when a receiver's hold on its
 * webhook ends if that is later (GREATEST ignores a NULL hold).
 */
const LOG_COLUMNS = `d.id, d.event_id, e.type AS event_type, d.attempt, d.status, d.response_status, d.duration_ms,
  d.error, d.url, e.payload AS request_body, d.response_body,
  CASE WHEN d.status = 'pending' THEN GREATEST(d.run_at, w.hold_until) END AS next_attempt_at, d.created_at`;

/** A webhook's attempts, newest first, after the cursor position (createdAt, seq). */
export async function listAttempts(
  db: Db,
  webhookId: string,
  limit: number,
  after: { createdAt: Date; seq: string } | undefined,
): Promise<(DeliveryLogRow & { seq: string })[]> {
  return await db<(DeliveryLogRow & { seq: string })[]>`
    SELECT d.seq, ${db.unsafe(LOG_COLUMNS)}
    FROM deliveries d JOIN events e ON e.id = d.event_id JOIN webhooks w ON w.id = d.webhook_id
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

/**
 * Deletes finished attempts that finished before `before` (the retention);
 * returns how many. Events go with the event log's own sweep (events/purge.ts).
 */
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
    FROM deliveries d JOIN events e ON e.id = d.event_id JOIN webhooks w ON w.id = d.webhook_id
    WHERE d.id = ${id}`;
  return rows[0];
}
