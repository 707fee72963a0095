-- The two partial indexes of in-flight rows that 0012 drops, dropped again
-- where they are still there: 0012 was changed after it had been applied, and
-- a database that applied it before the change kept both. The claim no longer
-- reads them (it counts the in-flight set once, through deliveries_lease_idx),
-- and each was kept up at every claim and result. IF EXISTS: on every other
-- database 0012 already dropped them.
DROP INDEX IF EXISTS deliveries_in_flight_idx;
DROP INDEX IF EXISTS deliveries_in_flight_webhook_idx;
