-- Webhook operations: a secret rotation's overlap, and a receiver's hold.
--
-- `previous_secret_ciphertext`: the secret a rotation replaced, sealed as the
-- current one is (src/secrets/secret_box.ts, bound to the webhook's id), which
-- keeps signing deliveries beside it until `previous_secret_expires_at`. NULL
-- when there is no overlap; a PATCH of the secret ends one, and the minute
-- sweep forgets it once the overlap has ended.
--
-- `hold_until`: a receiver answered 429 or 503 with Retry-After; no attempt of
-- the webhook is claimed before then (at most 24 hours after the answer).
-- Left in place once it has passed: the claim compares it with the time.
ALTER TABLE webhooks
  ADD COLUMN previous_secret_ciphertext text,
  ADD COLUMN previous_secret_expires_at timestamptz,
  ADD COLUMN hold_until timestamptz;

-- Every claim reads the webhooks held at that moment: a range scan over the
-- webhooks that ever had a hold, never the whole table.
CREATE INDEX webhooks_hold_idx ON webhooks (hold_until) WHERE hold_until IS NOT NULL;
-- The minute sweep reads the overlaps that have ended: only webhooks in one.
CREATE INDEX webhooks_previous_secret_idx ON webhooks (previous_secret_expires_at)
  WHERE previous_secret_expires_at IS NOT NULL;
