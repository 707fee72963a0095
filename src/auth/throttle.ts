/**
 * Password-guessing defences (design: "Security posture"): failed logins are
 * throttled per email and per client address, registrations per client
 * address. Everything is counted in Postgres, so the limits hold across
 * instances and restarts.
 *
 * Unknown emails are throttled exactly like known ones, so the throttle does
 * not tell which accounts exist; the bucket holds the email's SHA-256, not
 * the address itself.
 */
import { createMiddleware } from "hono/factory";
import type { Sql } from "../db/client.ts";
import type { Config } from "../config.ts";
import type { Clock } from "../shared/clock.ts";
import type { AppEnv } from "../http/env.ts";
import { ApiError } from "../errors.ts";
import { sha256Hex } from "../shared/crypto.ts";
import { clientAddressReader } from "../http/client_address.ts";
import {
  admitAttempt,
  type FailureKey,
  type FailurePolicy,
  resetBucket,
  withdrawAttempt,
} from "../rate_limit/lockout.ts";
import { checkAndRecord, type Policy } from "../rate_limit/limiter.ts";

/** The configuration of the throttles. */
export type ThrottleConfig = Pick<
  Config,
  | "loginEmailMaxFailures"
  | "loginAddressMaxFailures"
  | "loginFailureWindowSeconds"
  | "loginLockoutSeconds"
  | "loginLockoutMaxSeconds"
  | "registrationsPerAddressPerHour"
  | "trustedProxies"
>;

/** What the throttles need. */
export interface ThrottleDeps {
  sql: Sql;
  clock: Clock;
  config: ThrottleConfig;
}

/** The email as the throttle counts it: trimmed and lowercased, as accounts compare emails. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** An admitted login attempt: counted as a failure until `succeeded` withdraws it. */
export interface LoginAttempt {
  emailBucket: string;
  addressBucket: string;
  at: Date;
}

/** The login throttle of one instance. */
export interface LoginThrottle {
  /** Admits an attempt (counted as a failure from now on), or throws 429 RATE_LIMITED with Retry-After. */
  admit(email: string, address: string): Promise<LoginAttempt>;
  /** The attempt was right: it is no failure, and the email's failures and lockouts are forgotten. */
  succeeded(attempt: LoginAttempt): Promise<void>;
}

/** Builds the login throttle from the configuration. */
export function loginThrottle(deps: ThrottleDeps): LoginThrottle {
  const { config } = deps;
  const lockouts = { lockoutSeconds: config.loginLockoutSeconds, maxLockoutSeconds: config.loginLockoutMaxSeconds };
  const window = config.loginFailureWindowSeconds;
  const perEmail: FailurePolicy = { maxFailures: config.loginEmailMaxFailures, windowSeconds: window, ...lockouts };
  const perAddress: FailurePolicy = { maxFailures: config.loginAddressMaxFailures, windowSeconds: window, ...lockouts };
  return {
    async admit(email, address) {
      const emailBucket = `login-failures:email:${sha256Hex(normalizeEmail(email))}`;
      const addressBucket = `login-failures:address:${address}`;
      const keys: FailureKey[] = [
        { bucket: emailBucket, policy: perEmail },
        { bucket: addressBucket, policy: perAddress },
      ];
      const now = deps.clock.now();
      // Committed whatever the answer: a lockout that starts here must be seen by every instance.
      const admission = await deps.sql.begin((tx) => admitAttempt(tx, keys, now));
      if (!admission.allowed) throw tooManyLogins(admission.retryAfterSeconds);
      return { emailBucket, addressBucket, at: admission.at };
    },
    async succeeded(attempt) {
      await deps.sql.begin(async (tx) => {
        await resetBucket(tx, attempt.emailBucket);
        // The address keeps its other failures: logging in to one's own account must not
        // wipe the guesses made at others from the same address.
        await withdrawAttempt(tx, attempt.addressBucket, attempt.at);
      });
    },
  };
}

function tooManyLogins(retryAfterSeconds: number): ApiError {
  return new ApiError(
    429,
    "RATE_LIMITED",
    `Too many failed login attempts: try again in ${retryAfterSeconds} seconds`,
    undefined,
    { "Retry-After": String(retryAfterSeconds) },
  );
}

/**
 * Limits registration attempts per client address and sliding hour. Every
 * attempt that reaches it counts (a taken email too: that answer tells which
 * accounts exist), except refused ones.
 */
export function registrationLimit(deps: ThrottleDeps) {
  const addressOf = clientAddressReader(deps.config.trustedProxies);
  const policy: Policy = {
    name: "registrations",
    limit: deps.config.registrationsPerAddressPerHour,
    windowSeconds: 3600,
  };
  return createMiddleware<AppEnv>(async (c, next) => {
    const bucket = `registrations:address:${addressOf(c)}`;
    const decision = await deps.sql.begin((tx) => checkAndRecord(tx, bucket, policy, deps.clock.now()));
    if (!decision.allowed) {
      throw new ApiError(
        429,
        "RATE_LIMITED",
        `Too many registrations from your address: at most ${policy.limit} per hour`,
        undefined,
        { "Retry-After": String(decision.resetSeconds) },
      );
    }
    await next();
  });
}
