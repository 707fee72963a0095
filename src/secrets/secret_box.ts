/**
 * Encryption of secrets at rest with AES-256-GCM through Web Crypto. The
 * record id is bound as additional data, so a ciphertext copied onto another
 * row does not decrypt.
 *
 * Stored form: `v1.<base64 of 12-byte IV + ciphertext + tag>`.
 */
const VERSION = "v1";
const encoder = new TextEncoder();

/**
 * Standard base64 to bytes. Surrounding whitespace is ignored (a key pasted
 * with a newline); anything else that is not base64 throws, including
 * whitespace inside, which `Uint8Array.fromBase64` alone would skip.
 */
function decodeBase64(text: string): Uint8Array<ArrayBuffer> {
  const trimmed = text.trim();
  if (/\s/.test(trimmed)) throw new SyntaxError("Not base64");
  return Uint8Array.fromBase64(trimmed);
}

/** Encrypts and decrypts secrets with one key. */
export interface SecretBox {
  seal(plaintext: string, boundTo: string): Promise<string>;
  open(sealed: string, boundTo: string): Promise<string>;
}

/** Imports a 32-byte key (base64) as an AES-256-GCM box. */
export async function createSecretBox(keyBase64: string): Promise<SecretBox> {
  const raw = decodeBase64(keyBase64);
  if (raw.length !== 32) throw new Error("ENCRYPTION_KEY must be 32 bytes in base64 (openssl rand -base64 32)");
  const key = await crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]);
  return {
    async seal(plaintext, boundTo) {
      const iv = crypto.getRandomValues(new Uint8Array(12));
      const ct = new Uint8Array(
        await crypto.subtle.encrypt(
          { name: "AES-GCM", iv, additionalData: encoder.encode(boundTo) },
          key,
          encoder.encode(plaintext),
        ),
      );
      const out = new Uint8Array(iv.length + ct.length);
      out.set(iv);
      out.set(ct, iv.length);
      return `${VERSION}.${out.toBase64()}`;
    },
    async open(sealed, boundTo) {
      const [version, payload] = sealed.split(".", 2);
      if (version !== VERSION || !payload) throw new Error("Unknown secret format");
      const bytes = decodeBase64(payload);
      const plain = await crypto.subtle.decrypt(
        { name: "AES-GCM", iv: bytes.slice(0, 12), additionalData: encoder.encode(boundTo) },
        key,
        bytes.slice(12),
      );
      return new TextDecoder().decode(plain);
    },
  };
}
