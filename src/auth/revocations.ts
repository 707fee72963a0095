/**
 * Revocation of credentials that requests are still using: an event stream
 * or a long poll authenticated once, at its start, and then open for minutes.
 * When a key is revoked or a session ends, every such request of that
 * credential ends within the time a NOTIFY takes to reach its instance: the
 * revoking transaction sends the credential's id on `AUTH_CHANNEL` (the
 * channel that already makes every instance forget a revoked key), and this
 * instance also hears of it at once (`publishLocal`), the embedded database
 * included. A credential that expires ends its requests at its expiry.
 *
 * NOTIFYs sent while an instance's listening connection was down are lost:
 * after a reconnection every credential in use is looked up again.
 */
import { getLogger } from "@logtape/logtape";
import type { NotificationHub } from "../notifications/hub.ts";
import type { Clock } from "../shared/clock.ts";

const log = getLogger(["inbox", "auth"]);

/** The notification channel that carries the ids of revoked credentials to every instance. */
export const AUTH_CHANNEL = "inbox_auth";

/** A credential as the requests it authenticated know it. */
export interface Credential {
  /** An API key's id, or `session:` and the hash of a session's token. */
  id: string;
  /** When it stops being valid by itself (null: never, until revoked). */
  expiresAt: Date | null;
}

/** The id of a session's credential: its token's hash, which is how the sessions table knows it. */
export function sessionCredentialId(tokenHash: string): string {
  return `session:${tokenHash}`;
}

/** A request's hold on its credential: `signal` aborts when the credential is revoked or expires. */
export interface CredentialHold {
  signal: AbortSignal;
  /** The request ended: forget it (always called, in a finally). */
  release(): void;
}

/** Why a held credential's signal aborted: the request answers 401 or ends. */
export class CredentialRevoked extends Error {
  override name = "CredentialRevoked";
}

/** The credentials of this instance's open requests. */
export interface Revocations {
  /** Holds `credential` for a request that stays open. */
  hold(credential: Credential): CredentialHold;
  /** Ends every request of a credential (revoked here, or heard from another instance). */
  revoked(id: string): void;
  /** Credentials held now (for tests and metrics). */
  readonly size: number;
}

/** Looks up which of these credential ids are still valid (exist and have not expired). */
export type StillValid = (ids: string[]) => Promise<Set<string>>;

/** The longest a timer may wait (setTimeout's 32-bit limit, about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Builds the revocations of one instance, subscribed to `AUTH_CHANNEL` on the hub. */
export function createRevocations(
  deps: { hub: Pick<NotificationHub, "subscribe">; clock: Clock; stillValid: StillValid },
): Revocations {
  const byId = new Map<string, Set<AbortController>>();

  const revoked = (id: string) => {
    const holds = byId.get(id);
    if (!holds) return;
    byId.delete(id);
    for (const hold of holds) hold.abort(new CredentialRevoked("The credential was revoked"));
  };

  const recheck = async () => {
    const ids = [...byId.keys()];
    if (ids.length === 0) return;
    try {
      const valid = await deps.stillValid(ids);
      for (const id of ids) if (!valid.has(id)) revoked(id);
    } catch (err) {
      log.warn("Could not look up the credentials of open requests again: {error}", { error: String(err) });
    }
  };

  deps.hub.subscribe(AUTH_CHANNEL, { onNotify: revoked, onResync: () => void recheck() });

  return {
    hold(credential) {
      const controller = new AbortController();
      let holds = byId.get(credential.id);
      if (!holds) byId.set(credential.id, holds = new Set());
      holds.add(controller);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const armExpiry = () => {
        if (credential.expiresAt === null) return;
        const left = credential.expiresAt.getTime() - deps.clock.now().getTime();
        if (left <= 0) return controller.abort(new CredentialRevoked("The credential expired"));
        timer = setTimeout(armExpiry, Math.min(left, MAX_TIMER_MS));
      };
      armExpiry();
      return {
        signal: controller.signal,
        release() {
          clearTimeout(timer);
          const set = byId.get(credential.id);
          if (!set?.delete(controller)) return;
          if (set.size === 0) byId.delete(credential.id);
        },
      };
    },
    revoked,
    get size() {
      return byId.size;
    },
  };
}
