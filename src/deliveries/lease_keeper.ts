/**
 * Short leases kept alive by a heartbeat (Convoy's model). A claim takes the
 * accounts of its attempts for LEASE_MS (`delivery_owners`); while the
 * process holds attempts, this keeper renews its leases on their accounts in
 * one statement every HEARTBEAT_MS. A process that dies stops renewing, so
 * another instance takes its accounts, and their attempts, over within about
 * LEASE_MS of the kill, instead of the delivery timeout plus a margin (15 s)
 * as when a lease had to outlast the whole attempt.
 *
 * Never twice at once: an attempt whose lease could not be renewed (the
 * database is away) is stopped before the lease runs out, when less than
 * STOP_MARGIN_MS of it is left, and one whose lease was lost (its account is
 * no longer this worker's) is stopped at once. Another instance takes an
 * account over only once its lease has run out, so the two never send an
 * attempt together.
 *
 * A claim leaves its attempts pending in the table (`repo.claim`); the same
 * statement marks in flight those whose exchange has been under way for
 * MARK_AFTER_MS, so the delivery log shows an attempt that hangs. While
 * draining, an exchange takes about 7 ms: almost none is ever marked.
 */
import { getLogger } from "@logtape/logtape";
import type { Sql } from "../db/client.ts";
import type { Clock } from "../shared/clock.ts";
import { withoutContext } from "../shared/log.ts";
import type { ClaimedDelivery } from "./repo.ts";
import { renewLeases } from "./repo.ts";

const log = getLogger(["inbox", "deliveries"]);

/** How long a claim holds an attempt without renewal. */
export const LEASE_MS = 2_000;
/** How often the leases of running attempts are renewed: four tries per lease. */
export const HEARTBEAT_MS = 500;
/** An attempt whose lease has less than this left unrenewed is stopped. */
export const STOP_MARGIN_MS = 300;
/** An exchange under way this long is marked in flight at the next heartbeat (within 1 s of its start). */
export const MARK_AFTER_MS = 500;

/** Why an attempt was stopped (the reason its verdict records). */
export const LEASE_LOST =
  "Stopped: the lease on this attempt could not be renewed, so another instance may take it over";

interface Held {
  d: ClaimedDelivery;
  stop: AbortController;
  /** When its exchange began (performance.now()); undefined while it waits for the caps. */
  began?: number;
  /** Whether its row is in flight under this worker. */
  marked: boolean;
}

/** The leases of one process's running attempts. */
export class LeaseKeeper {
  readonly #held = new Map<string, Held>();
  readonly #sql: Sql;
  readonly #clock: Clock;
  readonly #worker: string;
  #timer: ReturnType<typeof setInterval> | undefined;
  #renewing = false;

  constructor(deps: { sql: Sql; clock: Clock; worker: string }) {
    this.#sql = deps.sql;
    this.#clock = deps.clock;
    this.#worker = deps.worker;
  }

  /** Keeps `d`'s lease alive until `release`; the signal aborts when it is lost. */
  hold(d: ClaimedDelivery): AbortSignal {
    const stop = new AbortController();
    this.#held.set(d.id, { d, stop, marked: false });
    if (this.#timer === undefined) {
      // Beats belong to no request: the first hold may run in one's log context.
      this.#timer = withoutContext(() => setInterval(() => this.#beat(), HEARTBEAT_MS));
    }
    return stop.signal;
  }

  /** The attempt's exchange begins: once under way for MARK_AFTER_MS, its row is marked in flight. */
  began(id: string): void {
    const h = this.#held.get(id);
    if (h) h.began = performance.now();
  }

  /** The attempt finished (recorded or given up): its lease is no longer renewed. */
  release(id: string): void {
    this.#held.delete(id);
    if (this.#held.size === 0) this.close();
  }

  /** Stops the heartbeat. */
  close(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #beat(): void {
    // First the local check, which needs no database: a lease about to run
    // out unrenewed stops its attempt, even while a renewal hangs.
    const now = this.#clock.now().getTime();
    for (const { d, stop } of this.#held.values()) {
      if (d.leaseUntil.getTime() - now < STOP_MARGIN_MS && !stop.signal.aborted) stop.abort(new Error(LEASE_LOST));
    }
    if (this.#renewing || this.#held.size === 0) return;
    this.#renewing = true;
    void this.#renew().finally(() => this.#renewing = false);
  }

  async #renew(): Promise<void> {
    const asked = [...this.#held.values()].filter((h) => !h.stop.signal.aborted);
    if (asked.length === 0) return;
    const now = this.#clock.now();
    const until = new Date(now.getTime() + LEASE_MS);
    const markBefore = performance.now() - MARK_AFTER_MS;
    const attempts = asked.map((h) => ({
      id: h.d.id,
      accountId: h.d.accountId,
      url: h.d.url,
      mark: h.marked || (h.began !== undefined && h.began <= markBefore),
    }));
    let renewed: Set<string>;
    try {
      renewed = await renewLeases(this.#sql, this.#worker, attempts, now, until);
    } catch (err) {
      // The database is away: the local check stops the attempts in time.
      log.debug("Renewing {count} leases failed: {error}", { count: asked.length, error: String(err) });
      return;
    }
    for (const [i, h] of asked.entries()) {
      if (renewed.has(h.d.id)) {
        h.d.leaseUntil = until;
        h.marked = attempts[i]!.mark;
      } else if (this.#held.has(h.d.id)) {
        // No longer this worker's (its lease ran out and another took it over), or recorded meanwhile.
        h.stop.abort(new Error(LEASE_LOST));
      }
    }
  }
}
