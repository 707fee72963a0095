/**
 * A database outage as this instance sees it. The first work that fails for
 * want of a connection (a request, the delivery queue's claim, an SMTP
 * command) logs one warning; requests keep answering 503 (errors.ts), SMTP
 * 451, and the queue keeps backing off, all quietly, while a probe asks the
 * database once a second; the probe's first answer logs one info line. So a
 * restart of PostgreSQL costs two log lines, not one per request, command or
 * claim.
 */
import { getLogger } from "@logtape/logtape";
import type { Db } from "./client.ts";
import { ping } from "./repo.ts";
import { connectionErrorReason, isConnectionError } from "./connection_errors.ts";
import { withTimeout } from "../shared/with_timeout.ts";
import { withoutContext } from "../shared/log.ts";

const log = getLogger(["inbox", "db"]);

const ANSWER_TIMEOUT_MS = 2000;

/** Whether the database answers within `timeoutMs` (/readyz, the outage probe). */
export async function databaseAnswers(db: Db, timeoutMs = ANSWER_TIMEOUT_MS): Promise<boolean> {
  return await withTimeout(ping(db).then(() => true, () => false), timeoutMs, () => false);
}

/** The outage tracker of one instance. */
export interface DatabaseOutage {
  /** Whether work has found the database unreachable and the probe has not had an answer since. */
  readonly down: boolean;
  /**
   * A request failed with a connection error (and is answered 503): the
   * first report of an outage logs and starts the probe, the others are
   * quiet; requests are counted for the line that ends the outage.
   */
  report(err: unknown): void;
  /**
   * Other work failed (the queue's claim, an SMTP command, an event stream):
   * a connection error is reported as `report` does, without counting a
   * request, and true is returned; any other error is left to the caller
   * (false), which logs it.
   */
  absorb(err: unknown): boolean;
  /** Stops the probe (instance shutdown). */
  stop(): void;
}

/** Tracks outages of the database that `probe` reaches. */
export function createDatabaseOutage(
  deps: { probe: () => Promise<boolean>; probeIntervalMs?: number },
): DatabaseOutage {
  const interval = deps.probeIntervalMs ?? 1000;
  let down = false;
  let since = 0;
  let refused = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;

  const probe = async () => {
    timer = undefined;
    const answered = await deps.probe();
    if (stopped) return;
    if (!answered) {
      timer = setTimeout(probe, interval);
      return;
    }
    down = false;
    log.info("The database answers again after {seconds} s; {refused} requests were answered 503 meanwhile", {
      seconds: Math.round((Date.now() - since) / 100) / 10,
      refused,
    });
  };

  const noteFailure = (err: unknown, requests: number) => {
    if (down) {
      refused += requests;
      return;
    }
    down = true;
    since = Date.now();
    refused = requests;
    log.warn("The database does not answer ({reason}): requests answer 503 until it does", {
      reason: connectionErrorReason(err),
    });
    // The probe belongs to no request: its line must not carry this one's id.
    if (!stopped) withoutContext(() => timer = setTimeout(probe, interval));
  };

  return {
    get down() {
      return down;
    },
    report: (err) => noteFailure(err, 1),
    absorb(err) {
      if (!isConnectionError(err)) return false;
      noteFailure(err, 0);
      return true;
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
