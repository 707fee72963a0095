/**
 * A short-lived cache of authenticated keys, so that a request with an API key
 * costs no database round trip of its own. An entry lives at most `ttlMs`
 * (1 s): that bounds how long a revoked key or a changed plan can outlive its
 * change on another instance. Revocation also invalidates at once: locally,
 * and on every instance listening to `AUTH_CHANNEL` (auth/revocations.ts;
 * NOTIFY sent with the DELETE).
 */
import type { KeyOwner } from "./repo.ts";

/** Cached owners of key digests. */
export class AuthCache {
  readonly #entries = new Map<string, { owner: KeyOwner; expires: number }>();

  constructor(
    readonly ttlMs = 1_000,
    readonly maxEntries = 10_000,
    readonly now: () => number = performance.now.bind(performance),
  ) {}

  /** The owner of a key digest, if cached and fresh. */
  get(keyHash: string): KeyOwner | undefined {
    const entry = this.#entries.get(keyHash);
    if (!entry) return undefined;
    if (entry.expires <= this.now()) {
      this.#entries.delete(keyHash);
      return undefined;
    }
    return entry.owner;
  }

  /** Remembers an owner for `ttlMs`. */
  set(keyHash: string, owner: KeyOwner): void {
    // Oldest first out: a Map iterates in insertion order.
    if (this.#entries.size >= this.maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(keyHash, { owner, expires: this.now() + this.ttlMs });
  }

  /** Forgets every key (revocations may have been missed while not listening). */
  clear(): void {
    this.#entries.clear();
  }

  /** Forgets a key by id (it was revoked). */
  invalidateKey(keyId: string): void {
    for (const [hash, entry] of this.#entries) if (entry.owner.keyId === keyId) this.#entries.delete(hash);
  }
}
