/**
 * Imported signing keys of recently delivered webhooks, so that an attempt
 * neither decrypts the secret nor imports the HMAC key again (together a
 * tenth of a delivery's CPU time in a profile of the delivery benchmark).
 *
 * Keyed by webhook id and stored ciphertext: a new or removed secret is
 * another ciphertext, so a stale key is never used. A webhook in the overlap
 * of a rotation has two entries, one per secret; which of them sign an
 * attempt is decided by what its claim read (the previous secret only while
 * it is live), never by what is cached. It holds only signing
 * keys whose bytes are private to the signer (nothing shows them: not JSON,
 * not inspection), and at most `max` of them, the least recently used
 * leaving first.
 */
import { importSigningKey, type SigningSecret } from "./signer.ts";

/** Decrypts a stored secret (`SecretBox.open`). */
export type OpenSecret = (ciphertext: string, webhookId: string) => Promise<string>;

export class SigningKeyCache {
  readonly #keys = new Map<string, Promise<SigningSecret>>();
  readonly #open: OpenSecret;
  readonly #max: number;

  constructor(open: OpenSecret, max = 10_000) {
    this.#open = open;
    this.#max = max;
  }

  /** Keys held now. */
  get size(): number {
    return this.#keys.size;
  }

  /** The key of `webhookId`'s secret stored as `ciphertext`; rejects as `open` does. */
  get(webhookId: string, ciphertext: string): Promise<SigningSecret> {
    const id = `${webhookId}\n${ciphertext}`;
    let key = this.#keys.get(id);
    if (key) {
      // Most recently used goes last (a Map iterates in insertion order).
      this.#keys.delete(id);
      this.#keys.set(id, key);
      return key;
    }
    key = this.#open(ciphertext, webhookId).then(importSigningKey);
    // A secret that does not decrypt is not remembered: the next attempt tries again.
    key.catch(() => this.#keys.get(id) === key && this.#keys.delete(id));
    this.#keys.set(id, key);
    if (this.#keys.size > this.#max) this.#keys.delete(this.#keys.keys().next().value!);
    return key;
  }
}
