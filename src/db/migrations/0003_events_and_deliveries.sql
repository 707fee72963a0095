-- The transactional outbox: an event and its deliveries are written in the
-- transaction of the change that caused them, so a committed change always
-- has its deliveries and a rolled-back one never does.

CREATE TABLE events (
  id         text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  type       text NOT NULL,
  -- The exact JSON body every attempt sends (and signs): serialised once.
  payload    text NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX events_created_idx ON events (created_at);

-- One row per attempt: its id is the X-Delivery-ID. A failed attempt that
-- will be retried gets a new pending row with attempt + 1.
CREATE TABLE deliveries (
  id              text PRIMARY KEY,
  -- Insertion order: orders the log when timestamps tie (a retry is queued in
  -- the same instant its predecessor failed).
  seq             bigint GENERATED ALWAYS AS IDENTITY,
  event_id        text NOT NULL REFERENCES events (id) ON DELETE CASCADE,
  webhook_id      text NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  attempt         integer NOT NULL,
  status          text NOT NULL CHECK (status IN ('pending', 'in_flight', 'succeeded', 'failed', 'cancelled')),
  run_at          timestamptz NOT NULL,
  lease_until     timestamptz,
  claimed_by      text,
  response_status integer,
  duration_ms     integer,
  error           text,
  created_at      timestamptz NOT NULL,
  finished_at     timestamptz
);
-- Partial indexes keep the hot queries (due work, in-flight per event,
-- expired leases) proportional to the work outstanding, not to history.
CREATE INDEX deliveries_due_idx ON deliveries (run_at) WHERE status = 'pending';
CREATE INDEX deliveries_in_flight_idx ON deliveries (event_id) WHERE status = 'in_flight';
CREATE INDEX deliveries_lease_idx ON deliveries (lease_until) WHERE status = 'in_flight';
CREATE INDEX deliveries_pending_webhook_idx ON deliveries (webhook_id) WHERE status = 'pending';
CREATE INDEX deliveries_log_idx ON deliveries (webhook_id, created_at DESC, seq DESC);
CREATE INDEX deliveries_finished_idx ON deliveries (finished_at) WHERE finished_at IS NOT NULL;
CREATE INDEX deliveries_event_idx ON deliveries (event_id);
