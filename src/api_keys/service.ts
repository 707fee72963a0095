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

export const MAX_API_KEYS = 10;
/** Plans with API keys (spec: Pro and Business); the routes and the admin CLI check the same list. */
export const API_KEY_PLANS: readonly Plan[] = ["pro", "business"];
/** `lastUsedAt` is written at most this often per key. */
export const LAST_USED_RESOLUTION_MS = 60_000;

/** Issues a key; the full key is in the result and nowhere else, ever. */
export async function createApiKey(
  sql: Sql,
  clock: Clock,
  accountId: string,
  name: string,
): Promise<repo.ApiKeyRow & { key: string }> {
  const { key, keyPrefix } = generateApiKey();
  const keyHash = sha256Hex(key);
  const row = await sql.begin(async (tx) => {
    await lockAccount(tx, accountId);
    if (await repo.countApiKeys(tx, accountId) >= MAX_API_KEYS) {
      throw new ApiError(400, "API_KEY_LIMIT", `Maximum ${MAX_API_KEYS} API keys allowed`);
    }
    const now = clock.now();
    return await repo.insertApiKey(tx, {
      id: newId("key", now.getTime()),
      accountId,
      name,
      keyPrefix,
      keyHash,
      createdAt: now,
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
 * is refused (each cause has its own 401 hint, src/auth/hints.ts). Expiring
 * keys will add `{ ok: false; reason: "expired"; expiresAt: Date }`, answered
 * with `expiredKeyHint`.
 */
export type KeyCheck =
  | { ok: true; owner: repo.KeyOwner }
  | { ok: false; reason: "malformed" | "unknown" };

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
  if (owner.lastUsedAt === null || now.getTime() - owner.lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS) {
    await repo.touchLastUsed(sql, owner.keyId, now, LAST_USED_RESOLUTION_MS);
    // The cached copy must not trigger the write again on every request.
    owner.lastUsedAt = now;
  }
  return { ok: true, owner };
}
