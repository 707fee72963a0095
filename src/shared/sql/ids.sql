-- new_id(prefix, at): an id made in a statement, in the form of shared/ids.ts
-- `newId`: the prefix, '_', 10 characters of the time in ms and 16 random
-- ones, Crockford base32 in lower case. For rows a statement makes itself
-- (an event's deliveries, one per subscribed webhook), whose number only the
-- statement knows.
CREATE OR REPLACE FUNCTION new_id(p_prefix text, p_at timestamptz) RETURNS text
LANGUAGE plpgsql VOLATILE PARALLEL SAFE AS $$
DECLARE
  alphabet constant text[] := string_to_array('0123456789abcdefghjkmnpqrstvwxyz', NULL);
  t bigint := floor(extract(epoch FROM p_at) * 1000)::bigint;
  -- 16 random bytes; 5 bits of each make a character (80 bits, as newId's).
  r bytea := uuid_send(gen_random_uuid());
  out text := '';
BEGIN
  FOR i IN 1..10 LOOP
    out := alphabet[(t & 31) + 1] || out;
    t := t >> 5;
  END LOOP;
  out := p_prefix || '_' || out;
  FOR i IN 0..15 LOOP
    out := out || alphabet[(get_byte(r, i) & 31) + 1];
  END LOOP;
  RETURN out;
END
$$;
