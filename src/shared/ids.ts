/**
 * Resource ids: a type prefix and a ULID-style body (48-bit time, 80 random
 * bits, Crockford base32), so ids sort by creation time and say what they name.
 */
const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

/** A new id such as `wh_01jd3k...`. */
export function newId(prefix: string, now: number = Date.now()): string {
  let time = "";
  let t = now;
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[t % 32] + time;
    t = Math.floor(t / 32);
  }
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  let rand = "";
  for (const b of bytes) rand += ALPHABET[b & 31];
  return `${prefix}_${time}${rand}`;
}
