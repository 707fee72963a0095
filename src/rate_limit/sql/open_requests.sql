-- Opens a request of `p_kind` for the account when fewer than `p_limit` are
-- open over all instances, and says whether it did. The advisory lock comes
-- first, in a statement of its own: in a function each statement takes a new
-- snapshot, so the count sees every request another instance opened before
-- the lock was granted (in one statement the snapshot would predate the wait
-- for the lock, and two instances could both take the last place).
CREATE OR REPLACE FUNCTION open_requests_open(
  p_id text, p_account_id text, p_kind text, p_limit int, p_lease interval
) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('open_requests:' || p_kind || ':' || p_account_id, 0));
  -- Rows whose instance died: their lease has passed, so they no longer count; gone for good here.
  DELETE FROM open_requests
  WHERE account_id = p_account_id AND kind = p_kind AND lease_until <= clock_timestamp();
  IF (SELECT count(*) FROM open_requests WHERE account_id = p_account_id AND kind = p_kind) >= p_limit THEN
    RETURN false;
  END IF;
  INSERT INTO open_requests (id, account_id, kind, lease_until)
  VALUES (p_id, p_account_id, p_kind, clock_timestamp() + p_lease);
  RETURN true;
END
$$;
