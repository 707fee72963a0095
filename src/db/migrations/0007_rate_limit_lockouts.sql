-- Lockouts of the failure throttles (failed logins per email and per client
-- address). A bucket that reaches its failure limit is locked until
-- locked_until; `strikes` counts the lockouts in a row, and each one lasts
-- twice the one before (capped). The failures themselves stay in
-- rate_limit_hits like every other counted event.
CREATE TABLE rate_limit_lockouts (
  bucket       text PRIMARY KEY,
  strikes      integer NOT NULL CHECK (strikes > 0),
  locked_until timestamptz NOT NULL
);
-- The sweep removes lockouts long over.
CREATE INDEX rate_limit_lockouts_until_idx ON rate_limit_lockouts (locked_until);
