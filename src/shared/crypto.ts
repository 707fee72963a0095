/** Small crypto helpers shared by features that store only digests. */
import { createHash, timingSafeEqual } from "node:crypto";

/** Lowercase hex SHA-256 of a UTF-8 string, or of bytes as they are. */
export function sha256Hex(text: string | Uint8Array): string {
  // node:crypto's synchronous hash: this runs on every authenticated request,
  // and Web Crypto's promise costs ~50x more for a 42-byte input.
  return createHash("sha256").update(text).digest("hex");
}

/** `n` random bytes as unpadded base64url. */
export function randomToken(n = 32): string {
  const bytes = crypto.getRandomValues(new Uint8Array(n));
  return bytes.toBase64({ alphabet: "base64url", omitPadding: true });
}

/** Constant-time equality of two strings through their SHA-256 digests. */
export function timingSafeEqualText(a: string, b: string): boolean {
  // Comparing digests keeps the time independent of where the inputs differ
  // and of their lengths (timingSafeEqual itself needs equal lengths).
  return timingSafeEqual(createHash("sha256").update(a).digest(), createHash("sha256").update(b).digest());
}
