-- The claim query counts in-flight attempts per webhook (the per-webhook cap
-- that keeps one hanging receiver from taking every slot): index them.
CREATE INDEX deliveries_in_flight_webhook_idx ON deliveries (webhook_id) WHERE status = 'in_flight';
