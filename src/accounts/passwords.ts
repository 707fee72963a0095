/**
 * Password hashing with scrypt (node:crypto), stored as
 * `scrypt$N$r$p$<salt b64>$<hash b64>` so parameters can be raised later
 * without invalidating existing hashes.
 */
import { randomBytes, scrypt, timingSafeEqual } from "node:crypto";

const N = 16384;
const R = 8;
const P = 1;
const KEY_LENGTH = 32;

function derive(password: string, salt: Uint8Array, n: number, r: number, p: number): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    scrypt(password, salt, KEY_LENGTH, { N: n, r, p, maxmem: 256 * n * r }, (err, key) => {
      if (err) reject(err);
      else resolve(key);
    });
  });
}

/** Hashes a password with a fresh salt. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, N, R, P);
  return `scrypt$${N}$${R}$${P}$${salt.toBase64()}$${key.toBase64()}`;
}

/** Checks a password against a stored hash in constant time. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split("$");
  if (parts.length !== 6 || parts[0] !== "scrypt") return false;
  const [n, r, p] = [Number(parts[1]), Number(parts[2]), Number(parts[3])];
  let salt: Uint8Array, expected: Uint8Array;
  try {
    salt = Uint8Array.fromBase64(parts[4]!);
    expected = Uint8Array.fromBase64(parts[5]!);
  } catch {
    return false; // Not base64: no hash this service wrote.
  }
  const key = await derive(password, salt, n, r, p);
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** A hash of nothing in particular, checked when an email is unknown so that
 * a login's timing does not tell whether the account exists. */
export const DUMMY_HASH = await hashPassword(crypto.randomUUID());
