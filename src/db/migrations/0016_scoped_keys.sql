-- Scoped, inbox-restricted and expiring API keys. NULL scopes: every scope,
-- including those added later (a key made as the spec shows keeps full
-- access); NULL inbox_ids: every inbox of the account; NULL expires_at:
-- never expires.
ALTER TABLE api_keys
  ADD COLUMN scopes text[],
  ADD COLUMN inbox_ids text[],
  ADD COLUMN expires_at timestamptz;

-- The inbox an event is about (inbox.created, inbox.expired,
-- message.received), so that a key restricted to some inboxes reads only
-- their events. Events stored before are filled from their envelopes.
ALTER TABLE events ADD COLUMN inbox_id text;
UPDATE events SET inbox_id = payload::jsonb -> 'data' ->> 'inboxId'
WHERE type IN ('inbox.created', 'inbox.expired', 'message.received');
