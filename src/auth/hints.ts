/**
 * What a 401 or a 403 PLAN_REQUIRED says beside its fixed `error`: the cause
 * and what to do, in the error body's `hint`. A hint never holds the
 * credential that was presented, not even a part of it.
 */
import type { Plan } from "../accounts/schemas.ts";

/** The causes of a 401 UNAUTHORIZED on `/api`, one hint each. */
export const UNAUTHORIZED_HINTS = {
  /** Neither an Authorization header nor a session cookie. */
  noCredential: "No credential was sent: send an API key as `Authorization: Bearer isk_...`, " +
    "or the session cookie that POST /api/auth/login sets",
  /** An Authorization header of another form than `Bearer <key>`. */
  notBearer: "The Authorization header must be `Bearer <API key>`: the word Bearer, one space, then the key (isk_...)",
  /** A bearer token that is not a key of this service: wrong shape or checksum, checked before any lookup. */
  malformedKey: "This is not an API key of this service: a key is isk_ followed by 38 letters and digits, " +
    "the last 6 a checksum this one fails; copy the whole key again as it was shown when it was created",
  /** A well-formed key that no account holds: never issued here, or revoked (the two are not told apart). */
  unknownKey: "This API key is unknown or was revoked: create a new one (POST /api/api-keys, " +
    "or `deno task admin create-api-key --email <email>`)",
  /** A session cookie that names no live session. */
  session: "The session cookie is unknown or expired: log in again (POST /api/auth/login)",
  /** The credential was revoked or ended while its request waited (a long poll). */
  credentialEnded: "The API key or session of this request was revoked or ended while it waited: " +
    "use a live credential",
  /** A live credential whose account has been deleted. */
  accountGone: "The account of this credential no longer exists",
  /** A 401 from a middleware of the framework rather than ours. */
  refused:
    "The credential was refused: send a live API key as `Authorization: Bearer isk_...` or a live session cookie",
} as const;

/** The hint for an API key that expired (keys with `expiresAt`). */
export function expiredKeyHint(expiresAt: Date): string {
  return `This API key expired at ${expiresAt.toISOString()}: create a new one (POST /api/api-keys)`;
}

/** Why a static bearer token (ADMIN_TOKEN, METRICS_TOKEN) was refused; `variable` names the setting. */
export const staticTokenHints = (variable: string) => ({
  missing: `Send the token as \`Authorization: Bearer <${variable}>\``,
  notBearer: `The Authorization header must be \`Bearer <${variable}>\`: the word Bearer, one space, then the token`,
  wrong: `This is not the ${variable} this service was started with`,
});

/**
 * The hint of 403 PLAN_REQUIRED: the plans that have the feature (`feature`
 * is the subject of "need": "Webhooks", "API keys"), the account's plan, and
 * the operator's ways to change it (the admin CLI's `set-plan`, in
 * src/admin/cli.ts, and `PATCH /admin/accounts/{id}`).
 */
export function planRequiredHint(
  feature: string,
  plans: readonly Plan[],
  account: { accountId: string; plan: Plan },
): string {
  const target = plans[0] ?? "pro";
  return `${feature} need the ${plans.join(" or ")} plan; this account (${account.accountId}) is on the ` +
    `${account.plan} plan. An operator changes a plan with \`deno task admin set-plan ${account.accountId} ${target}\`, ` +
    `or over HTTP with \`PATCH /admin/accounts/${account.accountId}\` and {"plan":"${target}"}`;
}
