-- Long requests held open (event streams, message waits), so that their
-- number per account is bounded over every instance on the database. A row
-- lives while its request is open: deleted when it ends, kept alive by its
-- instance's heartbeat, and no longer counted once its lease has passed (an
-- instance that died without deleting its rows).
CREATE TABLE open_requests (
  id          text PRIMARY KEY,
  account_id  text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  kind        text NOT NULL,
  lease_until timestamptz NOT NULL
);
CREATE INDEX open_requests_account_kind_idx ON open_requests (account_id, kind);
