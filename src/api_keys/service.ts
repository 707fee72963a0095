/** API key rules: issue, list, revoke, and authenticate a bearer key. */
import type { Sql } from "../db/client.ts";
import { ApiError, notFound } from "../errors.ts";
import { newId } from "../shared/ids.ts";
import { sha256Hex } from "../shared/crypto.ts";
import type { Clock } from "../shared/clock.ts";
import { lockAccount } from "../accounts/repo.ts";
import type { Plan } from "../accounts/schemas.ts";
import { generateApiKey, isWellFormedApiKey } from "./key_format.ts";
import * as repo from "./repo.ts";
import type { AuthCache } from "./auth_cache.ts";
import { AUTH_CHANNEL } from "../auth/revocations.ts";
import type { NotificationHub } from "../notifications/hub.ts";
import { notify } from "../notifications/repo.ts";
import { type Scope, SCOPES } from "../auth/scopes.ts";

export const MAX_API_KEYS = 10;
/** Plans with API keys (spec: Pro and Business); the routes and the admin CLI check the same list. */
export const API_KEY_PLANS: readonly Plan[] = ["pro", "business"];
/** `lastUsedAt` is written at most this often per key. */
export const LAST_USED_RESOLUTION_MS = 60_000;

/** The longest a key may live: 365 days ("1 year" in the design's reading). */
export const MAX_KEY_LIFETIME_SECONDS = 365 * 86_400;
/** Expired keys stay listed this long (with their `expiresAt`), then the sweep removes them. */
export const EXPIRED_KEYS_LISTED_MS = 7 * 86_400_000;

/** What a new key may do: every scope and inbox unless narrowed; forever unless it expires. */
export interface KeyGrant {
  name: string;
  /** Undefined: every scope (now and later). */
  scopes?: Scope[] | undefined;
  /** Undefined: every inbox of the account. */
  inboxIds?: string[] | undefined;
  /** An ISO timestamp in the future, at most 365 days ahead. */
  expiresAt?: string | undefined;
  /** 60 to 31,536,000; not with `expiresAt`. */
  expiresInSeconds?: number | undefined;
}

function invalid(path: string, message: string): ApiError {
  return new ApiError(400, "VALIDATION_ERROR", "Invalid request body", [{ path, message }]);
}

/** When a key granted `grant` at `now` expires (null: never); 400 for a moment in the past or too far ahead. */
function expiryOf(grant: KeyGrant, now: Date): Date | null {
  if (grant.expiresInSeconds !== undefined) return new Date(now.getTime() + grant.expiresInSeconds * 1000);
  if (grant.expiresAt === undefined) return null;
  const at = new Date(grant.expiresAt);
  if (at.getTime() <= now.getTime()) return invalidExpiry("must be in the future");
  if (at.getTime() > now.getTime() + MAX_KEY_LIFETIME_SECONDS * 1000) {
    return invalidExpiry("must be at most 365 days ahead");
  }
  return at;
}

function invalidExpiry(message: string): never {
  throw invalid("expiresAt", message);
}

/** Issues a key; the full key is in the result and nowhere else, ever. */
export async function createApiKey(
  sql: Sql,
  clock: Clock,
  accountId: string,
  grant: KeyGrant,
): Promise<repo.ApiKeyRow & { key: string }> {
  const { key, keyPrefix } = generateApiKey();
  const keyHash = sha256Hex(key);
  const row = await sql.begin(async (tx) => {
    await lockAccount(tx, accountId);
    const now = clock.now();
    const expiresAt = expiryOf(grant, now);
    const inboxIds = grant.inboxIds === undefined ? null : [...new Set(grant.inboxIds)];
    if (inboxIds) {
      const live = new Set(await repo.liveInboxIdsOf(tx, accountId, inboxIds, now));
      const unknown = inboxIds.filter((id) => !live.has(id));
      if (unknown.length > 0) throw invalid("inboxIds", `Not live inboxes of this account: ${unknown.join(", ")}`);
    }
    if (await repo.countApiKeys(tx, accountId, now) >= MAX_API_KEYS) {
      throw new ApiError(400, "API_KEY_LIMIT", `Maximum ${MAX_API_KEYS} API keys allowed`);
    }
    return await repo.insertApiKey(tx, {
      id: newId("key", now.getTime()),
      accountId,
      name: grant.name,
      keyPrefix,
      keyHash,
      createdAt: now,
      // Every scope is stored as no restriction: such a key gets the scopes added later too.
      scopes: grant.scopes === undefined || SCOPES.every((s) => grant.scopes!.includes(s))
        ? null
        : SCOPES.filter((s) => grant.scopes!.includes(s)),
      inboxIds,
      expiresAt,
    });
  });
  return { ...row, key };
}

/**
 * Revokes (deletes) a key; 404 when the account has no such key. Every
 * instance forgets it and ends the requests still open with it (streams,
 * waits): this one at once, the others when the NOTIFY sent with the DELETE
 * reaches them.
 */
export async function revokeApiKey(
  deps: { sql: Sql; hub: Pick<NotificationHub, "publishLocal"> },
  accountId: string,
  id: string,
): Promise<void> {
  const deleted = await deps.sql.begin(async (tx) => {
    if (!await repo.deleteApiKey(tx, accountId, id)) return false;
    await notify(tx, AUTH_CHANNEL, id);
    return true;
  });
  if (!deleted) throw notFound("API_KEY_NOT_FOUND", "API key not found");
  deps.hub.publishLocal(AUTH_CHANNEL, id);
}

/**
 * What a presented key turned out to be: a live key and its owner, or why it
 * is refused (each cause has its own 401 hint, src/auth/hints.ts).
 */
export type KeyCheck =
  | { ok: true; owner: repo.KeyOwner }
  | { ok: false; reason: "malformed" | "unknown" }
  | { ok: false; reason: "expired"; expiresAt: Date };

/** Checks a presented key; a live one's last use is recorded (at most once a minute). */
export async function authenticateApiKey(
  sql: Sql,
  clock: Clock,
  cache: AuthCache,
  presented: string,
): Promise<KeyCheck> {
  // The checksum turns away typos and random probes without a query.
  if (!isWellFormedApiKey(presented)) return { ok: false, reason: "malformed" };
  const hash = sha256Hex(presented);
  let owner = cache.get(hash);
  if (!owner) {
    owner = await repo.findKeyOwner(sql, hash);
    // Never issued here, or revoked: the table keeps no trace of revoked keys, so one answer for both.
    if (!owner) return { ok: false, reason: "unknown" };
    cache.set(hash, owner);
  }
  const now = clock.now();
  // Checked at every request, cached or not: a key stops at its expiry on every instance, to the millisecond.
  if (owner.expiresAt !== null && owner.expiresAt.getTime() <= now.getTime()) {
    return { ok: false, reason: "expired", expiresAt: owner.expiresAt };
  }
  if (owner.lastUsedAt === null || now.getTime() - owner.lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS) {
    await repo.touchLastUsed(sql, owner.keyId, now, LAST_USED_RESOLUTION_MS);
    // The cached copy must not trigger the write again on every request.
    owner.lastUsedAt = now;
  }
  return { ok: true, owner };
}
