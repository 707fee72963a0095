-- The CI email loop: each message keeps the bytes it arrived as (GET .../raw),
-- the one-time codes and links found in it, and its attachments' contents.
-- Rows stored before this migration have no raw message (null).
ALTER TABLE messages ADD COLUMN raw bytea;
ALTER TABLE messages ADD COLUMN codes jsonb NOT NULL DEFAULT '[]';
ALTER TABLE messages ADD COLUMN links jsonb NOT NULL DEFAULT '[]';

-- Contents apart from the message row: listing and reading a message never
-- load them. The metadata (id, filename, type, size) stays in
-- messages.attachments, in order.
CREATE TABLE attachments (
  id         text PRIMARY KEY,
  message_id text NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
  content    bytea NOT NULL
);
CREATE INDEX attachments_message_idx ON attachments (message_id);

-- The order messages of one inbox were stored in, for the wait and its `after`
-- cursor. The receiving transaction takes the next value as its last
-- statement, under a lock of the inbox row held to its commit, so `seq` is the
-- commit order within an inbox: a follower that got message n never misses one
-- committed after it with a smaller key, as it could with (received_at, id)
-- when two arrive in the same millisecond.
ALTER TABLE messages ADD COLUMN seq bigserial;
CREATE INDEX messages_inbox_seq_idx ON messages (inbox_id, seq);
