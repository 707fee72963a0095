-- The delivery claim: deliveries_take_accounts, deliveries_due_by_webhook
-- and deliveries_reserve, one stored function call per claim (see
-- src/deliveries/repo.ts `claim`, which counts the caps over what it
-- returns), and deliveries_claim, an earlier release's claim, kept for its
-- instances during a rolling upgrade.
--
-- Live SQL, not a migration: the migration runner applies this file at every
-- start, after the numbered migrations and under the same lock, so a database
-- always runs the functions of the release that started on it. Edit it in
-- place; the README beside it says what to do when a signature changes.

-- Takes for `p_worker`, until `p_lease_until`, those of the accounts
-- `p_accounts` that no instance holds or whose holder's lease ran out by
-- `p_now`, keeps those it holds already (its lease never shortened: it covers
-- the leases of the attempts it sends), and returns the accounts it holds
-- now. A row lock each, in id order (claims taking overlapping sets do not
-- deadlock), which a concurrent taker of the same account waits for, and then
-- sees whether it may still take it. The one way an account is taken: by a
-- claim (deliveries_reserve), and by the heartbeat that renews the leases
-- (deliveries/repo.ts `renewLeases`).
CREATE OR REPLACE FUNCTION deliveries_take_accounts(
  p_accounts text[], p_worker text, p_now timestamptz, p_lease_until timestamptz
) RETURNS SETOF text LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY WITH taken AS (
    INSERT INTO delivery_owners AS o (account_id, worker, lease_until)
    SELECT DISTINCT u.a, p_worker, p_lease_until FROM unnest(p_accounts) AS u(a)
    ORDER BY 1
    ON CONFLICT (account_id) DO UPDATE SET worker = p_worker,
      lease_until = GREATEST(CASE WHEN o.worker = p_worker THEN o.lease_until END, p_lease_until)
    WHERE o.worker = p_worker OR o.lease_until <= p_now
    RETURNING o.account_id
  )
  SELECT t.account_id FROM taken t;
END
$$;

-- The cap counting that deliveries_reserve did before it returned its rows
-- (deliveries_fit_caps) is the caller's now (src/deliveries/caps.ts
-- `fitCaps`), and deliveries_claim counts its own: the function is dropped,
-- with the marking function it replaced before (deliveries_mark_in_flight,
-- both of its signatures).
DROP FUNCTION IF EXISTS deliveries_fit_caps(
  text[], text[], text[], text[], int, int, int, int, timestamptz, timestamptz, text[], text[], text[]);
DROP FUNCTION IF EXISTS deliveries_mark_in_flight(text[], int, int, int, int, timestamptz, text, timestamptz);
DROP FUNCTION IF EXISTS deliveries_mark_in_flight(
  text[], int, int, int, int, timestamptz, text, timestamptz, text[], text[], text[]);

-- The claim's way past a head of the queue that the caps hold back
-- (deliveries_reserve): a skip scan of the webhooks with pending attempts, one
-- probe of deliveries_pending_webhook_due_idx each, then the oldest due
-- attempts of each webhook not at its cap (at most p_limit each), not of a
-- full event nor in p_locked (picked already, or held by the caller);
-- returns up to 2 * p_limit of them, oldest
-- first.
--
-- Both scans ask for that index's own order (the webhook's range written as
-- two bounds, so that the planner keeps the webhook in the order), which no
-- other index gives without a sort, and sorts are off here: with statistics
-- taken before a backlog (they said nothing was pending), the planner read
-- both through the due-order index, every pending attempt at each step, and
-- a claim past 10,000 pending attempts of one webhook took 29 ms instead of
-- about 1 (tests/bench/README.md). The sort of the result stays: nothing
-- else gives its order.
DROP FUNCTION IF EXISTS deliveries_due_by_webhook(timestamptz, int, text[], text[], text[]);
CREATE OR REPLACE FUNCTION deliveries_due_by_webhook(
  p_now timestamptz, p_limit int, p_full_events text[], p_full_webhooks text[], p_locked text[],
  p_low_at timestamptz, p_low_id text
) RETURNS text[] LANGUAGE plpgsql
SET enable_sort = off
-- The sort that stays makes the plan's cost that of a disabled node, far
-- over jit_above_cost: compiling it took about 100 ms a call.
SET jit = off
AS $$
BEGIN
  RETURN ARRAY(
    WITH RECURSIVE hooks AS (
      SELECT (
        SELECT d.webhook_id FROM deliveries d WHERE d.status = 'pending' ORDER BY d.webhook_id LIMIT 1
      ) AS hook
      UNION ALL
      SELECT (
        SELECT d.webhook_id FROM deliveries d WHERE d.status = 'pending' AND d.webhook_id > h.hook
        ORDER BY d.webhook_id LIMIT 1
      )
      FROM hooks h WHERE h.hook IS NOT NULL
    )
    SELECT c.id FROM hooks h CROSS JOIN LATERAL (
      SELECT d.id, d.run_at FROM deliveries d
      WHERE d.status = 'pending' AND d.webhook_id >= h.hook AND d.webhook_id <= h.hook AND d.run_at <= p_now
        AND (d.webhook_id, d.run_at, d.id) >= (h.hook, p_low_at, p_low_id)
        AND NOT (d.event_id = ANY(p_full_events)) AND d.id NOT IN (SELECT unnest(p_locked))
      ORDER BY d.webhook_id, d.run_at, d.id LIMIT p_limit
    ) c
    WHERE h.hook IS NOT NULL AND NOT (h.hook = ANY(p_full_webhooks))
    ORDER BY c.run_at, c.id LIMIT 2 * p_limit);
END
$$;

-- One claim: reads up to p_limit due attempts that can be sent now, those
-- of p_held excepted (the caller's attempts not finished yet), cancels those
-- whose webhook was disabled since they were queued, and returns the others
-- with what sending them needs, oldest first, then one last row with id NULL
-- that counts the rows held back and the cancelled ones (the queue claims
-- again soon when something was held back), and tells when the earliest
-- hold ends of the webhooks with due attempts that a receiver's Retry-After
-- holds (NULL when none).
--
-- It marks nothing: what it returns stays pending in the table. One instance
-- at a time sends an account's attempts (delivery_owners, migration 0018):
-- the claim passes over the attempts of accounts another instance holds
-- under a live lease, and takes the accounts of the rows it read, in id
-- order (so claims taking overlapping sets do not deadlock), when no one
-- holds them or their holder's lease ran out; a row of an account it could
-- not take is left and counted as held back. So no other instance reads the
-- rows it returns until that account lease runs out, and the caller, which
-- holds them in memory, passes them back as p_held until their results have
-- committed: no row lock, no status to set and set back. Each claim used to
-- lock its rows and mark them in flight, a second write of every row (a new
-- version in four indexes, as the status is in the partial indexes'
-- predicates): side by side (tests/bench/claim_cost.ts), a claim of 12 rows
-- took 1.37 ms without that write against 1.98, of 24 2.57 against 4.09. An
-- attempt under way for a while is marked in flight by the heartbeat that
-- renews the account leases (deliveries/repo.ts `renewLeases`), so the log
-- shows what hangs.
--
-- The caps are counted from the caller's exchanges under way (p_flying_*:
-- one entry each, the event, webhook and account), and a slot is free once
-- its exchange ends, while the result is still being recorded. Here they
-- only choose what to read: the events, webhooks and accounts at their caps
-- are skipped. Within the rows read, the caller counts them
-- (src/deliveries/caps.ts `fitCaps`) and leaves the rows over a cap pending.
-- Counted here (per account, then webhook, then event, with window
-- functions), they took about half of a claim's time in PostgreSQL: 2.2 to
-- 2.7 ms of about 5 for some 50 rows, while draining (pg_stat_statements).
-- The previous release's queue counts its caps over what it sends too: it
-- gets more rows reserved, never more exchanges.
--
-- A held webhook (hold_until after p_now) is skipped as one at its cap is:
-- none of its attempts is read or sent, whatever their run_at, until the
-- hold ends. Its attempts keep their place in the due order, so the head of
-- the queue may hold them; the scan passes over them as over capped ones.
DROP FUNCTION IF EXISTS deliveries_reserve(
  timestamptz, int, int, int, int, int, text, timestamptz, int, text[], text[], text[], text[]);
CREATE OR REPLACE FUNCTION deliveries_reserve(
  p_now timestamptz, p_limit int, p_per_event int, p_per_webhook int, p_per_account int, p_slots int,
  p_worker text, p_lease_until timestamptz, p_window int,
  p_flying_events text[], p_flying_webhooks text[], p_flying_accounts text[], p_held text[],
  p_floor_at timestamptz DEFAULT NULL, p_floor_id text DEFAULT NULL
) RETURNS TABLE (
  id text, event_id text, webhook_id text, account_id text, attempt int, event_type text, payload text,
  url text, secret_ciphertext text, lease_until timestamptz, previous_secret_ciphertext text, held_back int,
  cancelled int, held_until timestamptz, floor_at timestamptz, floor_id text
) LANGUAGE plpgsql
-- Index scans whatever the statistics say, here and in the functions this
-- one calls (a function's settings hold for the functions it calls). A queue
-- table's statistics are always behind (a backlog of thousands queued since
-- the last ANALYZE, or a new table that autovacuum has not analysed yet):
-- with them the planner took the table for a few rows and looked up the
-- claimed ids with a sequential scan (8 to 14 ms at 12,000 rows) or by
-- reading the whole pending index. Every statement here is meant to be
-- index lookups of a few rows. A SET clause on a called function as well
-- cost every claim 0.2 to 0.4 ms of about 1.3 (400 claims of 12 rows, each
-- rolled back).
SET enable_seqscan = off
SET enable_bitmapscan = off
-- Each statement here and in the functions this one calls planned once per
-- connection, as deliveries_record_results: PostgreSQL's default kept custom
-- plans (a generic plan of an array of unknown length looks dearer) and
-- planned them at every call. Side by side (tests/bench/claim_cost.ts), a
-- claim of 1 row took 0.81 to 0.91 ms instead of 1.79 to 2.13, of 12 rows
-- 1.33 to 1.50 instead of 1.67 to 1.96, of 24 about the same (0.88 to 0.95).
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
  full_events text[];
  full_webhooks text[];
  held_hooks text[];
  hold_ends timestamptz;
  candidates text[];
  picked text[];
  picked_hooks text[];
  not_owned int;
  inactive text[];
  claimed int;
  over int;
  filled text[] := '{}';
  lease timestamptz;
  low_at timestamptz := COALESCE(p_floor_at, '-infinity');
  low_id text := COALESCE(p_floor_id, '');
  oldest_at timestamptz;
  oldest_id text;
BEGIN
  -- The oldest due attempt from the caller's floor on (none: from the
  -- start), where every scan of the due order below starts. A finished
  -- attempt leaves a dead entry in the partial indexes of pending attempts
  -- until a VACUUM (none at all on the embedded database), at the head of
  -- the due order, which a scan from the start steps over: 200,000 attempts
  -- finished since the last VACUUM made a claim of 48 rows take 4.04 ms
  -- instead of 1.48, and the first claim after them 48 ms (their heap rows
  -- read to find them dead; tests/bench/claim_floor.ts). The
  -- caller passes back what this returns (`floor_at`, `floor_id`), less a
  -- margin for attempts that commit late, and no floor now and then, so
  -- that an attempt put back behind it (a lease that ran out) is found.
  SELECT d.run_at, d.id INTO oldest_at, oldest_id FROM deliveries d
  WHERE d.status = 'pending' AND d.run_at <= p_now AND (d.run_at, d.id) >= (low_at, low_id)
  ORDER BY d.run_at, d.id LIMIT 1;
  IF oldest_at IS NOT NULL THEN
    low_at := oldest_at;
    low_id := oldest_id;
  END IF;

  -- What is in flight is small (bounded by every instance's concurrency), so
  -- counting it per event, webhook and account costs little. An account is
  -- full here at half of what the others leave, the most the caller's count
  -- allows (caps.ts `fitCaps`).
  WITH flying AS MATERIALIZED (
    SELECT u.event_id, u.webhook_id, u.account_id
    FROM unnest(p_flying_events, p_flying_webhooks, p_flying_accounts) AS u(event_id, webhook_id, account_id)
    WHERE p_flying_events IS NOT NULL
    UNION ALL
    SELECT f.event_id, f.webhook_id, w.account_id FROM deliveries f JOIN webhooks w ON w.id = f.webhook_id
    WHERE p_flying_events IS NULL AND f.status = 'in_flight' AND f.lease_until > p_now
  ), held AS MATERIALIZED (
    SELECT h.account_id, count(*) AS n, (sum(count(*)) OVER ())::int AS total FROM flying h GROUP BY h.account_id
  )
  SELECT
    ARRAY(SELECT fe.event_id FROM flying fe GROUP BY fe.event_id HAVING count(*) >= p_per_event),
    ARRAY(
      SELECT fw.webhook_id FROM flying fw GROUP BY fw.webhook_id HAVING count(*) >= p_per_webhook
      UNION
      SELECT w.id FROM webhooks w JOIN held h ON h.account_id = w.account_id
      WHERE h.n >= LEAST(p_per_account, GREATEST(1, (p_slots - (h.total - h.n)) / 2)))
  INTO full_events, full_webhooks;

  -- The webhooks a receiver holds now (webhooks_hold_idx: only those that
  -- ever had a hold are read), skipped with the full ones; and when the
  -- earliest hold of those with an attempt due ends, for the queue's timer.
  held_hooks := ARRAY(SELECT w.id FROM webhooks w WHERE w.hold_until > p_now);
  -- The webhooks of accounts another instance holds: skipped as full ones.
  full_webhooks := full_webhooks || ARRAY(
    SELECT w.id FROM delivery_owners o JOIN webhooks w ON w.account_id = o.account_id
    WHERE o.worker <> p_worker AND o.lease_until > p_now);
  IF cardinality(held_hooks) > 0 THEN
    full_webhooks := full_webhooks || held_hooks;
    SELECT min(w.hold_until) INTO hold_ends FROM webhooks w
    WHERE w.id = ANY(held_hooks) AND EXISTS (
      SELECT 1 FROM deliveries d WHERE d.status = 'pending' AND d.webhook_id = w.id AND d.run_at <= p_now);
  END IF;

  -- The head of the queue, oldest first: each row that no cap holds back and
  -- the caller does not hold, until p_limit rows or after p_window rows
  -- besides the caller's, whatever the caps hold back. Read lazily, one row
  -- at a time.
  -- The caller's attempts are looked up in a hash of them (NOT IN a
  -- subquery), not compared one by one (= ANY of the array): it holds up to
  -- RESERVE times its slots, and with 160 to 250 held, a claim took 1.47 to
  -- 1.77 ms instead of 1.83 to 2.41 (a throwaway script of claim_cost.ts's
  -- kind). No id is NULL, so NOT IN means "none of them".
  -- Both arrays from one pass over the same rows, in the scan's order.
  SELECT COALESCE(array_agg(h.id), '{}'), COALESCE(array_agg(h.webhook_id), '{}')
  INTO picked, picked_hooks
  FROM (
    SELECT head.id, head.webhook_id FROM (
      SELECT d.id, d.event_id, d.webhook_id FROM deliveries d
      WHERE d.status = 'pending' AND d.run_at <= p_now AND (d.run_at, d.id) >= (low_at, low_id)
      ORDER BY d.run_at, d.id LIMIT p_window + cardinality(p_held)
    ) head
    WHERE NOT (head.event_id = ANY(full_events)) AND NOT (head.webhook_id = ANY(full_webhooks))
      AND head.id NOT IN (SELECT unnest(p_held))
    LIMIT p_limit) h;

  -- When the head filled the claim: the rows read that their webhook's cap,
  -- or their account's, will hold back at least (counted from the exchanges
  -- passed; the previous release passes none, and gets none counted), and
  -- the webhooks this claim fills (an account's share is never over
  -- p_per_account). A claim the head did not fill has read the whole window
  -- already, and looks past it below as it always did.
  over := 0;
  IF cardinality(picked) >= p_limit AND p_flying_webhooks IS NOT NULL THEN
    WITH l AS MATERIALIZED (
      SELECT u.webhook_id, w.account_id FROM unnest(picked_hooks) AS u(webhook_id) JOIN webhooks w ON w.id = u.webhook_id
    ), f AS MATERIALIZED (
      SELECT u.w, u.a FROM unnest(p_flying_webhooks, p_flying_accounts) AS u(w, a)
    ), hooks AS (
      SELECT l.webhook_id AS id, count(*)::int + (SELECT count(*)::int FROM f WHERE f.w = l.webhook_id) AS n
      FROM l GROUP BY l.webhook_id
    ), accounts AS (
      SELECT l.account_id AS id, count(*)::int + (SELECT count(*)::int FROM f WHERE f.a = l.account_id) AS n
      FROM l GROUP BY l.account_id
    )
    SELECT GREATEST(
        (SELECT COALESCE(sum(GREATEST(0, h.n - p_per_webhook)), 0) FROM hooks h),
        (SELECT COALESCE(sum(GREATEST(0, a.n - p_per_account)), 0) FROM accounts a))::int,
      ARRAY(
        SELECT h.id FROM hooks h WHERE h.n >= p_per_webhook
        UNION
        SELECT w.id FROM accounts a JOIN webhooks w ON w.account_id = a.id WHERE a.n >= p_per_account)
    INTO over, filled;
  END IF;

  -- Fewer than asked for while more is due behind the window, or rows that a
  -- cap will hold back: look webhook by webhook, skipping those at their cap
  -- and those this claim fills, for the oldest due attempts. So a backlog
  -- that fills the head of the queue and its caps at every claim does not
  -- keep another tenant's attempts behind it waiting: claim after claim took
  -- the backlog's freed slots, and another tenant's p95 was 92 to 168 ms
  -- instead of 27 to 41 (tests/bench/README.md, recover). Rows held back
  -- start the walk without the look past the window, which reads the
  -- window's index entries: a walk over few webhooks costs less.
  IF over > 0 OR cardinality(picked) < p_limit AND EXISTS (
    SELECT 1 FROM deliveries d WHERE d.status = 'pending' AND d.run_at <= p_now AND (d.run_at, d.id) >= (low_at, low_id)
    ORDER BY d.run_at, d.id OFFSET p_window LIMIT 1
  ) THEN
    candidates := deliveries_due_by_webhook(
      p_now, p_limit, full_events, full_webhooks || filled, picked || p_held, low_at, low_id);
    candidates := candidates[1:p_limit - cardinality(picked) + over];
    picked := picked || candidates;
    -- Their webhooks, as the head's rows have theirs from the scan.
    picked_hooks := picked_hooks || ARRAY(
      SELECT d.webhook_id FROM unnest(candidates) WITH ORDINALITY AS c(id, n) JOIN deliveries d ON d.id = c.id
      ORDER BY c.n);
  END IF;

  inactive := '{}';
  claimed := 0;
  not_owned := 0;
  IF cardinality(picked) > 0 THEN
    -- Each row's account, and whether its webhook is active, from its
    -- webhook (read with the row's id: a row's webhook never changes), in
    -- the rows' order: the accounts taken (or kept), and the rows of those it
    -- holds kept. Reading each row by its id here too, this statement took
    -- 0.95 ms a claim of about 50 rows against 0.46 (pg_stat_statements
    -- while draining, side by side). What sending them needs is read after the
    -- accounts are taken, by the next statement, whose snapshot sees a
    -- result that the account's previous holder recorded meanwhile.
    --
    -- An account this worker holds with at least half of a lease left is
    -- kept as it is, with no write: while an instance sends, its heartbeat
    -- renews its leases every 500 ms (lease_keeper.ts), and the rows return
    -- the shortest lease of the accounts kept (conservative: never a lease
    -- longer than the account's; one value, where a join to each row's
    -- account took 0.96 ms a claim of 48 rows against 0.92). So a claim of
    -- accounts held already, the common one while sending, writes nothing,
    -- and its commit waits for no WAL flush: with a lease written at every
    -- claim, claims spent about as long waiting for that flush as running
    -- (pg_stat_activity sampled while 2,000 deliveries/s went out). Side by side at 100 events/s to 10
    -- webhooks (tests/bench/latency_ab.ts, 6 rounds), p95 32.5 ms against
    -- 36.5 (medians), p50 7 against 8. A claim that takes its account pays
    -- for the look: 0.79 ms a claim of 48 rows against 0.77, 1 row 0.55
    -- against 0.49 (claims rolled back, as tests/bench/claim_cost.ts runs them).
    WITH rows AS MATERIALIZED (
      SELECT u.l, u.n, w.account_id, w.active
      FROM unnest(picked, picked_hooks) WITH ORDINALITY AS u(l, h, n) JOIN webhooks w ON w.id = u.h
    ), kept AS MATERIALIZED (
      SELECT o.account_id AS a, o.lease_until AS until FROM delivery_owners o
      WHERE o.account_id IN (SELECT r.account_id FROM rows r) AND o.worker = p_worker
        AND o.lease_until >= p_now + (p_lease_until - p_now) / 2
    ), owned AS MATERIALIZED (
      SELECT k.a FROM kept k
      UNION ALL
      SELECT deliveries_take_accounts(
        ARRAY(SELECT r.account_id FROM rows r WHERE r.account_id NOT IN (SELECT k.a FROM kept k)),
        p_worker, p_now, p_lease_until) AS a
    ), mine AS MATERIALIZED (
      SELECT r.* FROM rows r WHERE r.account_id IN (SELECT o.a FROM owned o)
    )
    SELECT
      ARRAY(SELECT m.l FROM mine m WHERE m.active ORDER BY m.n),
      ARRAY(SELECT m.l FROM mine m WHERE NOT m.active),
      (SELECT count(*) FROM rows)::int - (SELECT count(*) FROM mine)::int,
      LEAST(p_lease_until, (SELECT min(k.until) FROM kept k))
    INTO picked, inactive, not_owned, lease;

    -- Those of webhooks disabled since they were queued: cancelled, never sent.
    IF cardinality(inactive) > 0 THEN
      UPDATE deliveries d SET status = 'cancelled', finished_at = p_now WHERE d.id = ANY(inactive) AND d.status = 'pending';
    END IF;
  END IF;

  -- Nothing read (everything due held back, or nothing due): straight to the count.
  IF cardinality(picked) > 0 THEN
    -- The previous secret of a webhook comes back only while its overlap
    -- lasts (previous_secret_expires_at after p_now): the attempt is signed
    -- with it beside the current one (deliveries/dispatcher.ts `prepare`).
    RETURN QUERY SELECT d.id, d.event_id, d.webhook_id, w.account_id, d.attempt, e.type, e.payload,
      w.url, w.secret_ciphertext, lease,
      CASE WHEN w.previous_secret_expires_at > p_now THEN w.previous_secret_ciphertext END,
      NULL::int, NULL::int, NULL::timestamptz, NULL::timestamptz, NULL::text
    -- By primary key, the status tested on the row found: with `status = 'pending'` in the scan the planner could
    -- read the whole pending index to find these few rows (4 to 15 ms). OFFSET 0 keeps the test outside (no
    -- qualifier is pushed into a subquery with an OFFSET).
    FROM unnest(picked) WITH ORDINALITY AS u(l, n)
    CROSS JOIN LATERAL (SELECT x.* FROM deliveries x WHERE x.id = u.l OFFSET 0) d
    JOIN events e ON e.id = d.event_id JOIN webhooks w ON w.id = d.webhook_id
    WHERE d.status = 'pending'
    ORDER BY u.n;
    GET DIAGNOSTICS claimed = ROW_COUNT;
  END IF;
  -- The floor of the next claim: nothing due from the caller's on, then
  -- nothing before p_now either (what commits late the caller's margin
  -- covers).
  RETURN QUERY SELECT NULL::text, NULL::text, NULL::text, NULL::text, NULL::int, NULL::text, NULL::text,
    NULL::text, NULL::text, NULL::timestamptz, NULL::text, cardinality(picked) - claimed + not_owned, cardinality(inactive),
    hold_ends, COALESCE(oldest_at, p_now), COALESCE(oldest_id, '');
END
$$;

-- The claim of the releases before deliveries_reserve, for their instances
-- during a rolling upgrade (they call it by position, with nine arguments or
-- twelve, and read the columns they know by name): deliveries_reserve, those
-- of its rows that fit the caps, counted as those releases count them, and
-- those marked in flight under p_worker's lease, as they expect (they hold
-- nothing in memory that a later claim should pass over, count the caps only
-- here, and record only attempts in flight under their name). A row another
-- writer changed since the read (cancelled, or recorded) is not marked, nor
-- returned. The signature before the flying exchanges is dropped: a
-- nine-argument call reaches this one through the defaults.
DROP FUNCTION IF EXISTS deliveries_claim(timestamptz, int, int, int, int, int, text, timestamptz, int);
DROP FUNCTION IF EXISTS deliveries_claim(
  timestamptz, int, int, int, int, int, text, timestamptz, int, text[], text[], text[]);
CREATE OR REPLACE FUNCTION deliveries_claim(
  p_now timestamptz, p_limit int, p_per_event int, p_per_webhook int, p_per_account int, p_slots int,
  p_worker text, p_lease_until timestamptz, p_window int,
  p_flying_events text[] DEFAULT NULL, p_flying_webhooks text[] DEFAULT NULL, p_flying_accounts text[] DEFAULT NULL
) RETURNS TABLE (
  id text, event_id text, webhook_id text, account_id text, attempt int, event_type text, payload text,
  url text, secret_ciphertext text, lease_until timestamptz, previous_secret_ciphertext text, held_back int,
  cancelled int, held_until timestamptz
) LANGUAGE plpgsql
-- Its marking by primary key whatever the statistics say, planned once per connection (see deliveries_reserve).
SET enable_seqscan = off
SET enable_bitmapscan = off
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY WITH r AS MATERIALIZED (
    SELECT x.*, row_number() OVER () AS ord
    FROM deliveries_reserve(p_now, p_limit, p_per_event, p_per_webhook, p_per_account, p_slots, p_worker,
      p_lease_until, p_window, p_flying_events, p_flying_webhooks, p_flying_accounts, '{}'::text[]) x
  ), due AS MATERIALIZED (
    SELECT r.id, r.event_id, r.webhook_id, r.account_id, r.ord FROM r WHERE r.id IS NOT NULL
  ), flying AS MATERIALIZED (
    -- What the caps count, as deliveries_reserve counts it: the exchanges the
    -- caller passes, or, when it passes none, every attempt in flight over
    -- all instances (the lease index).
    SELECT u.event_id, u.webhook_id, u.account_id
    FROM unnest(p_flying_events, p_flying_webhooks, p_flying_accounts) AS u(event_id, webhook_id, account_id)
    WHERE p_flying_events IS NOT NULL
    UNION ALL
    SELECT f.event_id, f.webhook_id, fw.account_id FROM deliveries f JOIN webhooks fw ON fw.id = f.webhook_id
    WHERE p_flying_events IS NULL AND f.status = 'in_flight' AND f.lease_until > p_now
  ), held AS (
    SELECT fl.account_id, count(*) AS n FROM flying fl GROUP BY fl.account_id
  ), shares AS (
    -- An account may hold at most half of what the other accounts leave of
    -- the slots (divided among the accounts of this claim and one more),
    -- and never more than p_per_account.
    SELECT a.account_id, COALESCE(h.n, 0) AS held, LEAST(p_per_account, GREATEST(1,
      (p_slots - ((SELECT COALESCE(sum(n), 0)::int FROM held) - COALESCE(h.n, 0)))
        / ((SELECT count(DISTINCT due.account_id) FROM due) + 1))) AS share
    FROM (SELECT DISTINCT due.account_id FROM due) a LEFT JOIN held h ON h.account_id = a.account_id
  ), fit_account AS (
    -- Ranked per account first, then per webhook among the rows that fit
    -- their account, then per event among the rows that fit both.
    SELECT due.*, s.share, row_number() OVER (PARTITION BY due.account_id ORDER BY due.ord) + s.held AS slot
    FROM due JOIN shares s ON s.account_id = due.account_id
  ), fit_webhook AS (
    SELECT fa.id, fa.event_id, fa.webhook_id, fa.ord,
      row_number() OVER (PARTITION BY fa.webhook_id ORDER BY fa.ord) + COALESCE(hw.n, 0) AS slot
    FROM fit_account fa
    LEFT JOIN (SELECT fl.webhook_id, count(*) AS n FROM flying fl GROUP BY fl.webhook_id) hw
      ON hw.webhook_id = fa.webhook_id
    WHERE fa.slot <= fa.share
  ), fit AS MATERIALIZED (
    SELECT c.id FROM (
      SELECT fw.id, row_number() OVER (PARTITION BY fw.event_id ORDER BY fw.ord) + COALESCE(he.n, 0) AS slot
      FROM fit_webhook fw
      LEFT JOIN (SELECT fl.event_id, count(*) AS n FROM flying fl GROUP BY fl.event_id) he
        ON he.event_id = fw.event_id
      WHERE fw.slot <= p_per_webhook
    ) c WHERE c.slot <= p_per_event
  ), marked AS (
    UPDATE deliveries d SET status = 'in_flight', claimed_by = p_worker, lease_until = p_lease_until, url = r.url
    FROM r WHERE d.id = r.id AND d.id IN (SELECT fit.id FROM fit) AND d.status = 'pending'
    RETURNING d.id
  )
  SELECT r.id, r.event_id, r.webhook_id, r.account_id, r.attempt, r.event_type, r.payload, r.url,
    r.secret_ciphertext, r.lease_until, r.previous_secret_ciphertext,
    -- The rows the caps held back here too.
    r.held_back + ((SELECT count(*) FROM due) - (SELECT count(*) FROM fit))::int, r.cancelled, r.held_until
  FROM r WHERE r.id IS NULL OR r.id IN (SELECT m.id FROM marked m)
  ORDER BY r.ord;
END
$$;
