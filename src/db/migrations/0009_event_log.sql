-- The event log: every event of an account is kept for EVENT_RETENTION_DAYS
-- (GET /api/events, the live stream), not only those some webhook wanted.
--
-- `seq` is an account's commit order: the emitting transaction takes the next
-- value as its last statement, under an advisory lock per account held to its
-- commit (events/repo.ts `settleEvents`). A reader that resumes after event n
-- therefore never misses an event committed later with a smaller key.
CREATE SEQUENCE events_seq;
ALTER TABLE events ADD COLUMN seq bigint NOT NULL DEFAULT nextval('events_seq');
ALTER SEQUENCE events_seq OWNED BY events.seq;
CREATE INDEX events_account_seq_idx ON events (account_id, seq);
