-- What the delivery log shows of each attempt besides its outcome.
--
-- `url`: where the attempt went, the webhook's URL when it was claimed for
-- sending (a later PATCH of the webhook does not rewrite history); NULL until
-- then. `response_body`: the first 2,000 characters of the receiver's answer;
-- NULL when there was none.
--
-- The body sent is not stored per attempt: it is `events.payload`, serialised
-- once when the event was emitted and sent (and signed) unchanged by every
-- attempt and redelivery to every webhook; the log reads it from there, and
-- the event lives as long as a delivery refers to it.
ALTER TABLE deliveries ADD COLUMN url text;
ALTER TABLE deliveries ADD COLUMN response_body text;
