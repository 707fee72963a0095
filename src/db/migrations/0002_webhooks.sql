-- User webhooks: an HTTPS URL, the subscribed events, the failure count.
-- The signing secret is stored encrypted (AES-256-GCM, see
-- src/secrets/secret_box.ts), never in clear.

CREATE TABLE webhooks (
  id                  text PRIMARY KEY,
  account_id          text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  url                 text NOT NULL,
  events              text[] NOT NULL,
  secret_ciphertext   text,
  active              boolean NOT NULL,
  failure_count       integer NOT NULL DEFAULT 0,
  last_triggered_at   timestamptz,
  last_failure_at     timestamptz,
  last_failure_reason text,
  created_at          timestamptz NOT NULL,
  -- The last line of defence against a duplicate URL when two requests race.
  CONSTRAINT webhooks_account_url_key UNIQUE (account_id, url)
);
CREATE INDEX webhooks_account_idx ON webhooks (account_id, created_at);
