-- Disposable inboxes and the messages they receive over SMTP.

CREATE TABLE inboxes (
  id         text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  -- Always lowercase: the local part is validated lowercase and MAIL_DOMAIN is
  -- lowercased by the configuration, so RCPT lookups compare lowercased text.
  address    text NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  -- One row per address, live or expired-but-not-yet-swept: the last line of
  -- defence when two creations of one address race. Creating an address whose
  -- previous inbox has expired first expires that one (with its event).
  CONSTRAINT inboxes_address_key UNIQUE (address)
);
-- The account's listing, newest first, and its cursor.
CREATE INDEX inboxes_account_idx ON inboxes (account_id, created_at DESC, id DESC);
-- The expiry sweep reads only what is due.
CREATE INDEX inboxes_expires_idx ON inboxes (expires_at);

-- One row per recipient inbox of a received message. Attachment contents are
-- not stored, only their metadata.
CREATE TABLE messages (
  id           text PRIMARY KEY,
  inbox_id     text NOT NULL REFERENCES inboxes (id) ON DELETE CASCADE,
  from_address text NOT NULL,
  to_address   text NOT NULL,
  subject      text NOT NULL,
  text_body    text,
  html_body    text,
  -- JSON objects, read back as text: the camel transform of the driver would
  -- otherwise rewrite their keys (header names) on the way out.
  headers      jsonb NOT NULL,
  attachments  jsonb NOT NULL,
  size         integer NOT NULL,
  received_at  timestamptz NOT NULL
);
CREATE INDEX messages_inbox_idx ON messages (inbox_id, received_at DESC, id DESC);
