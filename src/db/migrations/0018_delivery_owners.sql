-- The instance that dispatches an account's deliveries, one at a time.
--
-- An instance holds an account while it has attempts of it unfinished, under a
-- lease renewed with theirs (src/deliveries/lease_keeper.ts); the claim takes
-- an account that no instance holds, or whose holder's lease ran out, and
-- passes over the attempts of accounts another instance holds. The holder
-- alone sends the account's attempts, so it counts the caps (per event, per
-- webhook, per account) from the exchanges it has under way, which it knows
-- without asking the database: a slot is free the moment its exchange ends,
-- not once its result has committed. A row whose lease ran out is deleted
-- with the expired leases of attempts (deliveries/repo.ts
-- `requeueExpiredLeases`), so the table holds about the accounts being sent
-- to now.
CREATE TABLE delivery_owners (
  account_id text PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
  worker text NOT NULL,
  lease_until timestamptz NOT NULL
);
-- Every claim reads the accounts other instances hold now, and the requeue
-- the leases that ran out: range scans, whatever the table holds.
CREATE INDEX delivery_owners_lease_idx ON delivery_owners (lease_until);
