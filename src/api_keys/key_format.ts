/**
 * API key format, after GitHub's token scheme: a fixed prefix a secret scanner
 * can match, 32 base62 random characters (about 190 bits), and a 6-character
 * base62 CRC32 of the rest, so a scanner (or this service, before any query)
 * can tell a real key from a look-alike offline.
 *
 *   isk_ + 32 random + 6 checksum  =  42 characters
 */
import { crc32 } from "node:zlib";

export const KEY_PREFIX = "isk_";
const RANDOM_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
/** How much of the key is shown in listings: the prefix and 8 random characters. */
export const DISPLAY_PREFIX_LENGTH = KEY_PREFIX.length + 8;
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const KEY_SHAPE = new RegExp(`^${KEY_PREFIX}[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`);

function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const b of crypto.getRandomValues(new Uint8Array(length * 2))) {
      // Rejection sampling: 248 = 4 * 62, so accepted bytes map without bias.
      if (b < 248 && out.length < length) out += BASE62[b % 62];
    }
  }
  return out;
}

function checksum(body: string): string {
  let n = crc32(body);
  let out = "";
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

/** A new key and the part of it that may be shown later. */
export function generateApiKey(): { key: string; keyPrefix: string } {
  const body = KEY_PREFIX + randomBase62(RANDOM_LENGTH);
  const key = body + checksum(body);
  return { key, keyPrefix: key.slice(0, DISPLAY_PREFIX_LENGTH) };
}

/** Whether a string has the shape and checksum of a key this service issues. */
export function isWellFormedApiKey(candidate: string): boolean {
  if (!KEY_SHAPE.test(candidate)) return false;
  const body = candidate.slice(0, candidate.length - CHECKSUM_LENGTH);
  return checksum(body) === candidate.slice(-CHECKSUM_LENGTH);
}
