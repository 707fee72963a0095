/** Small crypto helpers shared by features that store only digests. */
import { createHash } from "node:crypto";

const encoder = new TextEncoder();

/** Lowercase hex SHA-256 of a UTF-8 string. */
export function sha256Hex(text: string): string {
  // node:crypto's synchronous hash: this runs on every authenticated request,
  // and Web Crypto's promise costs ~50x more for a 42-byte input.
  return createHash("sha256").update(text).digest("hex");
}

/** `n` random bytes as unpadded base64url. */
export function randomToken(n = 32): string {
  const bytes = crypto.getRandomValues(new Uint8Array(n));
  return btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** Constant-time equality of two strings through their SHA-256 digests. */
export async function timingSafeEqualText(a: string, b: string): Promise<boolean> {
  // Comparing digests keeps the time independent of where the inputs differ
  // and of their lengths.
  const [da, db] = await Promise.all([
    crypto.subtle.digest("SHA-256", encoder.encode(a)),
    crypto.subtle.digest("SHA-256", encoder.encode(b)),
  ]);
  const x = new Uint8Array(da);
  const y = new Uint8Array(db);
  let diff = 0;
  for (let i = 0; i < x.length; i++) diff |= x[i]! ^ y[i]!;
  return diff === 0;
}
