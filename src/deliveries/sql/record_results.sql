-- Results recorded in batches: deliveries_record_results, one stored function
-- call per group commit (see src/deliveries/repo.ts `recordResults`), for
-- successes and failures alike.
--
-- Live SQL, not a migration: the migration runner applies this file at every
-- start, after the numbered migrations and under the same lock, so a database
-- always runs the functions of the release that started on it. Edit it in
-- place; the README beside it says what to do when a signature changes.

-- The failures-only function it replaces (0013 and the releases before this
-- one): a database upgraded by a start keeps no second way to record. An
-- instance of the previous release still running during a rolling upgrade
-- then fails to record its failures: it tries again until its lease is
-- nearly over, and the attempt is sent again once the lease runs out.
DROP FUNCTION IF EXISTS deliveries_record_failures(
  text, int, text[], int[], int[], text[], timestamptz[], text[], text[], timestamptz[]);

-- The signature before p_hold_until: dropped so that one function of the
-- name remains, which a call with the eleven arguments of the previous
-- release still reaches (p_hold_until has a default). A no-op on a database
-- upgraded already.
DROP FUNCTION IF EXISTS deliveries_record_results(
  text, int, text[], boolean[], int[], int[], text[], timestamptz[], text[], text[], timestamptz[]);

-- The signature before p_urls: dropped so that one function of the name
-- remains, which the previous release's calls (eleven or twelve arguments)
-- still reach through the defaults. A no-op on a database upgraded already.
DROP FUNCTION IF EXISTS deliveries_record_results(
  text, int, text[], boolean[], int[], int[], text[], timestamptz[], text[], text[], timestamptz[], timestamptz[]);

-- Every result of a batch, as if recorded one after the other in the batch's
-- order. An attempt this worker no longer holds records nothing ('lost'). It
-- holds an attempt that is still pending (a claim does not mark what it
-- returns, deliveries_reserve) while it holds the attempt's account
-- (delivery_owners names it: no other instance took the account over since),
-- and one in flight under its name (marked by the heartbeat, or claimed by
-- the previous release). An attempt cancelled while it was being sent (its
-- webhook disabled meanwhile by another failure) is held the same way: it
-- was sent, and its result is what the log shows. p_urls are the URLs the
-- attempts were sent to (NULL: the one the row has, the previous release's
-- call). Otherwise:
--
-- - a success (p_ok) closes the attempt as 'succeeded' and ends its webhook's
--   run of failures (the count back to 0), leaving `active` as it is;
-- - a failure closes it as 'failed' and counts one more consecutive failure,
--   from the webhook's count or from 0 after a success earlier in the batch.
--   The p_disable_after-th disables the webhook ('disabled', its pending
--   attempts cancelled); below that the retry is queued when the schedule has
--   one ('retry_scheduled'), and otherwise, or on a webhook already disabled
--   (before the batch or by an earlier failure of it), the failure is final
--   ('failed_final').
--
-- The webhook's `last_triggered_at` becomes the finish time of its last result
-- of the batch, or, when successes come last, the latest of those successes
-- (a batch of successes only: the latest of them); `last_failure_at` and
-- `last_failure_reason` those of its last failure; `hold_until` the latest of
-- its own and the failures' p_hold_until (a receiver's 429 or 503 with
-- Retry-After: the claim sends nothing to the webhook until then). One row
-- comes back per result (id, outcome); p_retry_ids, p_retry_at and
-- p_hold_until of a success are ignored.
--
-- The caller runs this call as the first CTE of a statement that appends a
-- `webhook.disabled` event for each result that comes back 'disabled'
-- (deliveries/repo.ts `recordResults`, through the outbox): so the event
-- commits with the disabling, written by the one writer of events
-- (events/repo.ts `appendEventsCtes`), whose locks come after this
-- function's. The locks here are taken in the order that writer documents:
-- the accounts' rows FOR KEY SHARE first (it takes them again, a no-op), then
-- the webhooks' rows, then its advisory locks.
CREATE OR REPLACE FUNCTION deliveries_record_results(
  p_worker text, p_disable_after int, p_ids text[], p_ok boolean[], p_statuses int[], p_durations int[],
  p_errors text[], p_finished timestamptz[], p_bodies text[], p_retry_ids text[], p_retry_at timestamptz[],
  p_hold_until timestamptz[] DEFAULT NULL, p_urls text[] DEFAULT NULL
) RETURNS TABLE (id text, outcome text) LANGUAGE plpgsql
-- Lookups of a few rows by primary key whatever the statistics say (see deliveries_reserve).
SET enable_seqscan = off
SET enable_bitmapscan = off
-- Planned once per connection, not at every call: with custom plans (the
-- default, as a generic plan of an array of unknown length looks dearer)
-- planning the statement below took about 1 ms of a 1.6 ms call recording
-- one result, 0.55 ms with the generic plan, which is the same index lookups.
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
  hook_ids text[];
  hook_counts int[];
  hook_active boolean[];
  ids text[];
  outcomes text[];
  stopped text[];
BEGIN
  -- A failure counts from its webhook's latest count: the webhooks of a batch
  -- with failures are locked first, in id order (no deadlock with another
  -- such batch), and their counts read from the locked rows (the latest
  -- versions, which no one else changes until this commits). A batch of
  -- successes reads no count (a success sets it to 0) and locks nothing
  -- first: that lock added 0.2 ms to a call recording one success and 0.7 to
  -- 1.1 ms to one recording 64. Its webhooks are then updated in no set
  -- order, as successes always were: a deadlock with another instance's
  -- batch fails one of the two writes, which `recordWithRetry` tries again.
  --
  -- Before the webhooks, their accounts FOR KEY SHARE, in id order: a
  -- failure may disable its webhook, and the statement then appends its
  -- event, which locks the account so (events/repo.ts). Taken only then, that
  -- lock would come after the webhook's and wait behind a PATCH that holds
  -- the account FOR UPDATE (accounts/repo.ts `lockAccount`) and waits for the
  -- webhook: a deadlock. The webhooks FOR NO KEY UPDATE, the lock of the
  -- UPDATE below, which serialises recordings as FOR UPDATE did but lets the
  -- foreign-key checks of an emitter's new attempts (FOR KEY SHARE of the
  -- webhook) through: such an emitter holds its account's advisory lock,
  -- which the event of a disabling waits for.
  IF false = ANY(p_ok) THEN
    PERFORM 1 FROM accounts a
    WHERE a.id IN (
      SELECT w.account_id FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id WHERE d.id = ANY(p_ids))
    ORDER BY a.id FOR KEY SHARE OF a;
    SELECT array_agg(l.id), array_agg(l.failure_count), array_agg(l.active)
    INTO hook_ids, hook_counts, hook_active
    FROM (
      SELECT w.id, w.failure_count, w.active FROM webhooks w
      WHERE w.id IN (SELECT d.webhook_id FROM deliveries d WHERE d.id = ANY(p_ids))
      ORDER BY w.id FOR NO KEY UPDATE OF w
    ) l;
  END IF;

  WITH r AS (
    -- A NULL p_hold_until or p_urls (the previous release's call) is an empty array, which unnest pads with NULLs.
    SELECT * FROM unnest(p_ids, p_ok, p_statuses, p_durations, p_errors, p_finished, p_bodies, p_retry_ids, p_retry_at,
      p_hold_until, p_urls)
      WITH ORDINALITY AS r(id, ok, response_status, duration_ms, error, finished_at, body, retry_id, retry_at,
        hold_until, url, ord)
  ), closed AS (
    UPDATE deliveries d SET status = CASE WHEN r.ok THEN 'succeeded' ELSE 'failed' END,
      response_status = r.response_status, duration_ms = r.duration_ms,
      error = CASE WHEN r.ok THEN NULL ELSE r.error END, finished_at = r.finished_at, lease_until = NULL,
      response_body = r.body, url = COALESCE(r.url, d.url), claimed_by = p_worker
    FROM r
    WHERE d.id = r.id AND (d.status = 'in_flight' AND d.claimed_by = p_worker OR d.status IN ('pending', 'cancelled')
      AND EXISTS (
        SELECT 1 FROM webhooks ow JOIN delivery_owners o ON o.account_id = ow.account_id
        WHERE ow.id = d.webhook_id AND o.worker = p_worker))
    RETURNING d.id, d.webhook_id, d.event_id, d.attempt, r.ok, r.ord, r.error, r.finished_at, r.retry_id, r.retry_at,
      r.hold_until
  ), numbered AS (
    -- Each webhook's results in the batch's order: its successes (s) and failures (f) so far.
    SELECT c.*, h.active, h.failure_count, count(*) FILTER (WHERE c.ok) OVER w AS s,
      count(*) FILTER (WHERE NOT c.ok) OVER w AS f
    FROM closed c LEFT JOIN unnest(hook_ids, hook_counts, hook_active) AS h(id, failure_count, active)
      ON h.id = c.webhook_id
    WINDOW w AS (PARTITION BY c.webhook_id ORDER BY c.ord)
  ), counted AS (
    -- The webhook's consecutive failures once each result is recorded. Before its first success of the batch:
    -- its count (locked above: a failure's webhook always is) plus f. After one: the failures since the latest
    -- success, f less the f at that success, which is the largest f of the successes so far (0 at a success).
    SELECT n.*, CASE WHEN n.s = 0 THEN n.failure_count + n.f ELSE n.f - max(n.f) FILTER (WHERE n.ok) OVER w END
        AS failures
    FROM numbered n
    WINDOW w AS (PARTITION BY n.webhook_id ORDER BY n.ord)
  ), judged AS (
    -- A failure after one that reached the limit (and so disabled the webhook) is final.
    SELECT k.*, CASE
        WHEN k.ok THEN 'succeeded'
        WHEN NOT k.active OR COALESCE(bool_or(NOT k.ok AND k.failures >= p_disable_after) OVER earlier, false)
          THEN 'failed_final'
        WHEN k.failures = p_disable_after THEN 'disabled'
        WHEN k.failures > p_disable_after THEN 'failed_final'
        WHEN k.retry_id IS NOT NULL THEN 'retry_scheduled'
        ELSE 'failed_final'
      END AS outcome,
      max(k.ord) OVER hook AS last, max(k.ord) FILTER (WHERE NOT k.ok) OVER hook AS last_failure
    FROM counted k
    WINDOW hook AS (PARTITION BY k.webhook_id),
      earlier AS (PARTITION BY k.webhook_id ORDER BY k.ord ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
  ), hooks AS (
    UPDATE webhooks w SET failure_count = g.failures,
      last_triggered_at = COALESCE(g.last_success_at, g.last_failure_at),
      last_failure_at = COALESCE(g.last_failure_at, w.last_failure_at),
      last_failure_reason = CASE WHEN g.failed THEN g.last_error ELSE w.last_failure_reason END,
      active = w.active AND NOT g.reached,
      -- GREATEST ignores NULLs: a hold only ever lengthens here.
      hold_until = GREATEST(w.hold_until, g.hold_until)
    FROM (
      -- Each filter on `last` or `last_failure` matches one row: plain aggregates, no sort per webhook.
      SELECT j.webhook_id, max(j.failures) FILTER (WHERE j.ord = j.last) AS failures,
        max(j.finished_at) FILTER (WHERE j.ok AND j.ord > COALESCE(j.last_failure, 0)) AS last_success_at,
        max(j.finished_at) FILTER (WHERE j.ord = j.last_failure) AS last_failure_at,
        max(j.error) FILTER (WHERE j.ord = j.last_failure) AS last_error,
        bool_or(NOT j.ok) AS failed, bool_or(NOT j.ok AND j.failures >= p_disable_after) AS reached,
        max(j.hold_until) FILTER (WHERE NOT j.ok) AS hold_until
      FROM judged j GROUP BY j.webhook_id
    ) g
    WHERE w.id = g.webhook_id
    RETURNING w.id, w.active, g.failed
  ), retried AS (
    INSERT INTO deliveries (id, event_id, webhook_id, attempt, status, run_at, created_at)
    SELECT j.retry_id, j.event_id, j.webhook_id, j.attempt + 1, 'pending', j.retry_at, j.finished_at
    FROM judged j WHERE j.outcome = 'retry_scheduled'
  )
  -- The two arrays are built from the same rows in the same order: each id stands beside its outcome.
  SELECT array_agg(r.id), array_agg(COALESCE(j.outcome, 'lost')),
    ARRAY(SELECT h.id FROM hooks h WHERE h.failed AND NOT h.active)
  INTO ids, outcomes, stopped
  FROM r LEFT JOIN judged j ON j.id = r.id;

  -- A webhook that a failure left disabled has its pending attempts
  -- cancelled, in a statement of its own: its fresh snapshot also sees a
  -- retry that a concurrent failure of the same webhook committed meanwhile.
  IF cardinality(stopped) > 0 THEN
    UPDATE deliveries d SET status = 'cancelled', finished_at = p_finished[1]
    WHERE d.status = 'pending' AND d.webhook_id = ANY(stopped);
  END IF;

  RETURN QUERY SELECT u.id, u.outcome FROM unnest(ids, outcomes) AS u(id, outcome);
END
$$;
