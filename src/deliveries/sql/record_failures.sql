-- Failures recorded in batches: deliveries_record_failures, one stored
-- function call per group commit (see src/deliveries/repo.ts `recordFailures`).
--
-- Live SQL, not a migration: the migration runner applies this file at every
-- start, after the numbered migrations and under the same lock, so a database
-- always runs the functions of the release that started on it. Edit it in
-- place; the README beside it says what to do when a signature changes.
--
-- Failed attempts recorded in batches, as successes already are (group
-- commit: the failures that finish while one write is on its way go in the
-- next, one call for the lot). Before, each failure was a statement of its
-- own, and a receiver that times out fails its in-flight attempts together.
--
-- For each failure, as if recorded one after the other in the batch's order:
-- the attempt is closed (if this worker still holds it: otherwise 'lost'),
-- its webhook counts one more consecutive failure and is disabled at the
-- p_disable_after-th ('disabled', its pending attempts cancelled); below that
-- the retry is queued when the schedule has one ('retry_scheduled'), and
-- otherwise, or on a webhook already disabled, the failure is final
-- ('failed_final').
CREATE OR REPLACE FUNCTION deliveries_record_failures(
  p_worker text, p_disable_after int, p_ids text[], p_statuses int[], p_durations int[], p_errors text[],
  p_finished timestamptz[], p_bodies text[], p_retry_ids text[], p_retry_at timestamptz[]
) RETURNS TABLE (id text, outcome text) LANGUAGE plpgsql
-- Lookups of a few rows by primary key whatever the statistics say (see deliveries_claim).
SET enable_seqscan = off
SET enable_bitmapscan = off
AS $$
#variable_conflict use_column
DECLARE
  ids text[];
  outcomes text[];
  stopped text[];
BEGIN
  -- The webhooks first, in id order (no deadlock with another batch): the
  -- next statement's snapshot then sees their latest counts, which no one
  -- else changes until this commits, and counts each failure from there.
  PERFORM 1 FROM webhooks w
  WHERE w.id IN (SELECT d.webhook_id FROM deliveries d WHERE d.id = ANY(p_ids))
  ORDER BY w.id FOR UPDATE OF w;

  WITH r AS (
    SELECT * FROM unnest(p_ids, p_statuses, p_durations, p_errors, p_finished, p_bodies, p_retry_ids, p_retry_at)
      WITH ORDINALITY AS r(id, response_status, duration_ms, error, finished_at, body, retry_id, retry_at, ord)
  ), closed AS (
    UPDATE deliveries d SET status = 'failed', response_status = r.response_status, duration_ms = r.duration_ms,
      error = r.error, finished_at = r.finished_at, lease_until = NULL, response_body = r.body
    FROM r
    WHERE d.id = r.id AND d.status = 'in_flight' AND d.claimed_by = p_worker
    RETURNING d.id, d.webhook_id, d.event_id, d.attempt, r.ord, r.error, r.finished_at, r.retry_id, r.retry_at
  ), judged AS (
    SELECT c.*, CASE
        WHEN NOT w.active THEN 'failed_final'
        WHEN w.failure_count + row_number() OVER (PARTITION BY c.webhook_id ORDER BY c.ord) = p_disable_after
          THEN 'disabled'
        WHEN w.failure_count + row_number() OVER (PARTITION BY c.webhook_id ORDER BY c.ord) > p_disable_after
          THEN 'failed_final'
        WHEN c.retry_id IS NOT NULL THEN 'retry_scheduled'
        ELSE 'failed_final'
      END AS outcome
    FROM closed c JOIN webhooks w ON w.id = c.webhook_id
  ), hooks AS (
    UPDATE webhooks w SET failure_count = w.failure_count + g.n, last_triggered_at = g.last_at,
      last_failure_at = g.last_at, last_failure_reason = g.last_error,
      active = w.active AND w.failure_count + g.n < p_disable_after
    FROM (
      SELECT j.webhook_id, count(*)::int AS n, (array_agg(j.finished_at ORDER BY j.ord DESC))[1] AS last_at,
        (array_agg(j.error ORDER BY j.ord DESC))[1] AS last_error
      FROM judged j GROUP BY j.webhook_id
    ) g
    WHERE w.id = g.webhook_id
    RETURNING w.id, w.active
  ), retried AS (
    INSERT INTO deliveries (id, event_id, webhook_id, attempt, status, run_at, created_at)
    SELECT j.retry_id, j.event_id, j.webhook_id, j.attempt + 1, 'pending', j.retry_at, j.finished_at
    FROM judged j WHERE j.outcome = 'retry_scheduled'
  )
  SELECT array_agg(r.id ORDER BY r.ord), array_agg(COALESCE(j.outcome, 'lost') ORDER BY r.ord),
    ARRAY(SELECT h.id FROM hooks h WHERE NOT h.active)
  INTO ids, outcomes, stopped
  FROM r LEFT JOIN judged j ON j.id = r.id;

  -- A disabled webhook's pending attempts are cancelled, in a statement of
  -- its own: its fresh snapshot also sees a retry that a concurrent failure
  -- of the same webhook committed meanwhile.
  IF cardinality(stopped) > 0 THEN
    UPDATE deliveries d SET status = 'cancelled', finished_at = p_finished[1]
    WHERE d.status = 'pending' AND d.webhook_id = ANY(stopped);
  END IF;

  RETURN QUERY SELECT u.id, u.outcome FROM unnest(ids, outcomes) AS u(id, outcome);
END
$$;
