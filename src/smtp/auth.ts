/**
 * AUTH and TLS rules of the SMTP listeners, as smtp-server's handlers apply
 * them (`onAuth`, `onMailFrom`, and the account check of `onRcptTo`).
 *
 * SMTP_AUTH:
 * - `any`: every username and password is accepted, with TLS or without, so
 *   an application configured with SMTP credentials sends unchanged.
 * - `api-key`: the password must be a live API key of a plan with API keys,
 *   checked by the API's own key check (`authenticateApiKey` with the
 *   instance's AuthCache), so a revoked key is refused as over HTTP. AUTH
 *   before STARTTLS is answered 530 without looking at what was sent: the
 *   password is a credential. An authenticated session delivers only to
 *   inboxes of the key's account, and its key is checked again at each
 *   MAIL FROM, so revoking it also stops a connection that stays open.
 * - `off`: AUTH is not offered (the listener disables the command).
 *
 * Mail without AUTH is accepted in every mode: the service is an MX too.
 * SMTP_REQUIRE_TLS refuses MAIL FROM before STARTTLS.
 *
 * No password or key is logged: smtp-server's log entries carry the
 * username, never the password, and the refusal log keeps only replies.
 */
import type { SMTPServerAuthentication, SMTPServerSession } from "smtp-server";
import { getLogger } from "@logtape/logtape";
import type { Config } from "../config.ts";
import type { Sql } from "../db/client.ts";
import type { DatabaseOutage } from "../db/outage.ts";
import type { Clock } from "../shared/clock.ts";
import type { AuthCache } from "../api_keys/auth_cache.ts";
import { API_KEY_PLANS, authenticateApiKey } from "../api_keys/service.ts";
import type { KeyOwner } from "../api_keys/repo.ts";
import type { LiveInbox } from "../inboxes/live_addresses.ts";
import { smtpError } from "./replies.ts";

const log = getLogger(["inbox", "smtp"]);

/** What the rules need: the settings, and the key check's database, clock and cache. */
export interface SmtpAuthDeps {
  config: Pick<Config, "smtpAuth" | "smtpRequireTls">;
  sql: Sql;
  clock: Clock;
  authCache: AuthCache;
  databaseOutage: Pick<DatabaseOutage, "absorb">;
}

/** The `session.user` of an authenticated SMTP session. */
export interface SmtpUser {
  /** The username the client gave (smtp-server's log entries name a user by it). */
  username: string;
  /** `api-key`: the key's account, the only one this session may deliver to. */
  accountId?: string;
  /** `api-key`: the key's inboxes when it is limited to some (null: every inbox of the account). */
  inboxIds?: readonly string[] | null;
  /** `api-key`: whether the key is still live; the key itself stays in this closure, out of any log entry. */
  stillValid?: () => Promise<boolean>;
}

const mustStartTls = () => smtpError(530, "Must issue a STARTTLS command first");
const invalidCredentials = () => smtpError(535, "Authentication credentials invalid");
const authUnavailable = () => smtpError(454, "Temporary authentication failure, try again later");
const keyRevoked = () => smtpError(530, "The API key this connection authenticated with is no longer valid");
const otherAccount = () => smtpError(550, "That inbox is not one the API key used in AUTH reaches");

/** The handlers of one listener. */
export interface SmtpAuthRules {
  onAuth(
    auth: SMTPServerAuthentication,
    session: SMTPServerSession,
    callback: (err: Error | null | undefined, response?: { user: SmtpUser }) => void,
  ): void;
  /** The refusal of MAIL FROM in this session, if any (TLS required; a key revoked since AUTH). */
  mailFromRefusal(session: SMTPServerSession): Promise<Error | undefined>;
  /** The refusal of RCPT to `inbox` in this session, if any (an inbox of another account than the key's). */
  rcptRefusal(session: SMTPServerSession, inbox: LiveInbox): Error | undefined;
}

const userOf = (session: SMTPServerSession): SmtpUser | undefined => session.user || undefined;

/** The rules of SMTP_AUTH and SMTP_REQUIRE_TLS. */
export function smtpAuthRules(deps: SmtpAuthDeps): SmtpAuthRules {
  const { smtpAuth, smtpRequireTls } = deps.config;
  /** The key's owner when it may send mail: live, and of a plan with API keys. */
  const ownerOf = async (key: string): Promise<KeyOwner | undefined> => {
    const check = await authenticateApiKey(deps.sql, deps.clock, deps.authCache, key);
    return check.ok && API_KEY_PLANS.includes(check.owner.plan) ? check.owner : undefined;
  };
  const failed = (err: unknown, what: string): Error => {
    if (!deps.databaseOutage.absorb(err)) log.error(`${what} failed: {error}`, { error: String(err) });
    return authUnavailable();
  };

  return {
    onAuth(auth, session, callback) {
      if (smtpAuth !== "api-key") return callback(null, { user: { username: auth.username ?? "" } });
      if (!session.secure) return callback(mustStartTls());
      const key = auth.password ?? "";
      ownerOf(key).then(
        (owner) => {
          if (!owner) return callback(invalidCredentials());
          const stillValid = async () => (await ownerOf(key))?.accountId === owner.accountId;
          callback(null, {
            user: { username: auth.username ?? "", accountId: owner.accountId, inboxIds: owner.inboxIds, stillValid },
          });
        },
        (err) => callback(failed(err, "API key check")),
      );
    },
    async mailFromRefusal(session) {
      if (smtpRequireTls && !session.secure) return mustStartTls();
      const stillValid = userOf(session)?.stillValid;
      if (!stillValid) return undefined;
      try {
        return await stillValid() ? undefined : keyRevoked();
      } catch (err) {
        return failed(err, "API key check");
      }
    },
    rcptRefusal(session, inbox) {
      const user = userOf(session);
      if (user?.accountId === undefined) return undefined;
      // The inboxes the key reaches: its account's, and of those only its own when it is limited to some.
      const reached = user.accountId === inbox.accountId && (user.inboxIds == null || user.inboxIds.includes(inbox.id));
      return reached ? undefined : otherAccount();
    },
  };
}
