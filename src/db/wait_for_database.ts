/**
 * Start-up's first contact with PostgreSQL: try until it answers, for a while
 * (a database container often starts after the service), logging each try;
 * then give up with one line that names DATABASE_URL and the cause. Answers
 * that no wait will change (no such database, a refused login) give up at once.
 */
import { getLogger } from "@logtape/logtape";
import { ConfigError } from "../shared/config_error.ts";
import type { Sql } from "./client.ts";
import { connectionErrorReason, isConnectionError } from "./connection_errors.ts";
import { withTimeout } from "../shared/with_timeout.ts";
import { errorCode } from "../shared/error_code.ts";
import { ping } from "./repo.ts";

const log = getLogger(["inbox", "db"]);

/** How long and how to wait. */
export interface WaitOptions {
  /** The DATABASE_URL, for messages (only its host and port are ever shown). */
  databaseUrl: string;
  /** Total time to keep trying (DATABASE_CONNECT_TIMEOUT_MS); 0: one try. */
  timeoutMs: number;
  /** Pause between tries. */
  retryDelayMs?: number;
}

/** `host:port` of a PostgreSQL URL: never the user or the password. */
export function databaseTarget(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  const host = url.hostname || url.searchParams.get("host") || "localhost";
  return `${host}:${url.port || "5432"}`;
}

/** Resolves once the database answers a ping; throws a ConfigError naming DATABASE_URL otherwise. */
export async function waitForDatabase(sql: Sql, opts: WaitOptions): Promise<void> {
  const target = databaseTarget(opts.databaseUrl);
  const retryDelayMs = opts.retryDelayMs ?? 1000;
  const started = Date.now();
  const deadline = started + opts.timeoutMs;
  for (let attempt = 1;; attempt++) {
    let failure: unknown;
    try {
      // Bounded by what is left of the wait (a host that drops packets never refuses).
      const answered = await withTimeout(
        ping(sql).then(() => true),
        Math.max(deadline - Date.now(), 1000),
        () => false,
      );
      if (answered) {
        if (attempt > 1) log.info("PostgreSQL at {target} answers (try {attempt})", { target, attempt });
        return;
      }
      failure = Object.assign(new Error("connection timed out"), { code: "CONNECT_TIMEOUT" });
    } catch (err) {
      failure = err;
    }
    if (!isConnectionError(failure)) throw refusal(failure, target);
    const reason = connectionErrorReason(failure);
    const left = deadline - Date.now();
    if (left <= 0) {
      const seconds = Math.round((Date.now() - started) / 1000);
      throw new ConfigError(
        `DATABASE_URL: PostgreSQL at ${target} does not answer (${reason}); gave up after ${attempt} ${
          attempt === 1 ? "try" : "tries"
        } in ${seconds} s: check that it runs and that the host and port are right`,
      );
    }
    log.warn("PostgreSQL at {target} does not answer ({reason}), try {attempt}; trying again for {left} s", {
      target,
      reason,
      attempt,
      left: Math.ceil(left / 1000),
    });
    await new Promise((r) => setTimeout(r, Math.min(retryDelayMs, left)));
  }
}

/** The one line for an answer that waiting will not change. */
function refusal(err: unknown, target: string): ConfigError {
  const code = errorCode(err);
  const message = err instanceof Error ? err.message : String(err);
  switch (code) {
    case "3D000": // invalid_catalog_name
      return new ConfigError(`DATABASE_URL: ${message} on ${target}: create it, or name an existing database`);
    case "28P01": // invalid_password
    case "28000": // invalid_authorization_specification (no such role, pg_hba refusal)
      return new ConfigError(`DATABASE_URL: ${message} on ${target}: check the user name and password`);
    default:
      return new ConfigError(`DATABASE_URL: cannot use PostgreSQL at ${target}: ${message}`);
  }
}
