-- The key check value: a known text sealed with the encryption key (AES-256-GCM,
-- src/secrets/key_check.ts), written by the first start. A later start whose
-- ENCRYPTION_KEY cannot open it refuses to run, rather than serving webhooks
-- whose signed deliveries would all fail. It reveals nothing of the key.
CREATE TABLE encryption_key_check (
  singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  sealed     text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
