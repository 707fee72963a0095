-- Accounts, sessions, API keys and the request-rate log.
-- Timestamps come from the application's clock (injectable in tests), so
-- columns have no DEFAULT now().

CREATE TABLE accounts (
  id            text PRIMARY KEY,
  email         text NOT NULL,
  password_hash text NOT NULL,
  plan          text NOT NULL CHECK (plan IN ('free', 'pro', 'business')),
  created_at    timestamptz NOT NULL
);
-- Emails are compared case-insensitively: Alice@x and alice@x are one person.
CREATE UNIQUE INDEX accounts_email_key ON accounts (lower(email));

-- Only the SHA-256 of a session token is stored: a database leak yields no
-- usable cookie.
CREATE TABLE sessions (
  token_hash text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX sessions_account_idx ON sessions (account_id);
CREATE INDEX sessions_expires_idx ON sessions (expires_at);

-- Keys are stored as SHA-256 only; key_prefix is the non-secret leading part
-- shown in listings.
CREATE TABLE api_keys (
  id           text PRIMARY KEY,
  account_id   text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  name         text NOT NULL,
  key_prefix   text NOT NULL,
  key_hash     text NOT NULL UNIQUE,
  created_at   timestamptz NOT NULL,
  last_used_at timestamptz
);
CREATE INDEX api_keys_account_idx ON api_keys (account_id, created_at);

-- A sliding-window log: one row per counted event in a bucket. Exact "N per
-- window" semantics (a fixed window would allow 2N across a boundary), and
-- shared by every instance on the database.
CREATE TABLE rate_limit_hits (
  bucket text NOT NULL,
  hit_at timestamptz NOT NULL
);
CREATE INDEX rate_limit_hits_bucket_idx ON rate_limit_hits (bucket, hit_at);
