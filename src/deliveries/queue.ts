/**
 * The in-process queue. PostgreSQL is the source of truth; this only decides
 * when to claim. It claims right after a wake-up (a local emit, a NOTIFY from
 * another instance, a finished exchange), at the next due retry, or when a
 * lease runs out, and never has more than the global cap of exchanges under
 * way, nor more than `perEvent` attempts of one event in flight across all
 * instances.
 *
 * An attempt has two parts: its HTTP exchange (`send`) and the recording of
 * its result (`complete`, which the result writer batches with others: one
 * completer for the process). Its slot is free as soon as the exchange ends,
 * so the next exchange does not wait for the commit; its row stays in flight
 * in the database, and its lease held, until the result has committed, so the
 * caps, which count rows in flight over all instances, are never exceeded
 * (they hold an attempt a little longer than its exchange, never shorter),
 * and an instance that dies between the two sends the attempt again once the
 * lease runs out (at least once).
 */
import { getLogger, withContext } from "@logtape/logtape";
import type { Sql } from "../db/client.ts";
import type { DatabaseOutage } from "../db/outage.ts";
import type { Clock } from "../shared/clock.ts";
import { withoutContext } from "../shared/log.ts";
import { withTimeout } from "../shared/with_timeout.ts";
import * as repo from "./repo.ts";
import { LEASE_MS, LeaseKeeper } from "./lease_keeper.ts";

const log = getLogger(["inbox", "deliveries"]);

/** How the queue behaves. */
export interface QueueOptions<S> {
  sql: Sql;
  clock: Clock;
  /** This instance's claim owner id. */
  worker: string;
  /** Attempts in flight in this process, over all events. */
  globalConcurrency: number;
  /** Attempts in flight over all instances: per event (spec 6.3: 3), per webhook, per account. */
  caps: repo.Caps;
  /** The HTTP exchange of one attempt; `stop` aborts when its lease is lost. Its slot is free once this settles. */
  send(d: repo.ClaimedDelivery, stop: AbortSignal): Promise<S>;
  /** Records what `send` got; the attempt stays in flight (its lease held) until this settles. */
  complete(d: repo.ClaimedDelivery, sent: S): Promise<unknown>;
  /** Where a claim that finds the database unreachable is reported (one warning per outage, not one per claim). */
  databaseOutage: Pick<DatabaseOutage, "absorb">;
  /** Longest sleep when nothing is known to be due (a safety net under NOTIFY). */
  idlePollMs?: number;
  /** Told how long each claim call (and how many rows it took), exchange and recording took, in seconds. */
  observe?: (stage: "claim" | "exchange" | "record", seconds: number, rows?: number) => void;
}

/** Work held back by a cap, and due work while attempts are unfinished, is looked at again this soon. */
const CAPPED_RETRY_MS = 250;
/** Finished attempts are let to accumulate this long, so one claim refills many slots. */
const REFILL_DELAY_MS = 2;
/** Expired leases are looked for at most this often (the sweep does it too). */
const LEASE_CHECK_MS = 500;
/**
 * Once a cap has held rows back, a claim asks for the attempts finished since
 * the last one (the room they left) and this many more, not for every free
 * slot: each row it locks and the marking then holds back costs the claim
 * its lock. Asking for 52 rows of an account with room for 12 took 2.1 to
 * 2.3 ms in PostgreSQL, asking for 12 1.2 ms.
 */
const CLAIM_SLACK = 8;

export class DeliveryQueue<S = unknown> {
  readonly #o: Required<QueueOptions<S>>;
  /** Attempts whose exchange is under way: the slots taken. */
  readonly #inFlight = new Map<string, Promise<void>>();
  /** Attempts not finished yet, their result not committed: exchanges under way, and results being recorded. */
  readonly #unfinished = new Map<string, Promise<void>>();
  readonly #leases: LeaseKeeper;
  #ticking = false;
  #again = false;
  #stopped = false;
  #started = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #timerAt = Infinity;
  #leaseCheckedAt = -Infinity;
  /** Whether the last claim found rows that a cap held back. */
  #capBound = false;
  /** Attempts finished (results committed) since the last claim started. */
  #finishedSinceClaim = 0;

  constructor(options: QueueOptions<S>) {
    this.#o = { idlePollMs: 60_000, observe: () => {}, ...options };
    this.#leases = new LeaseKeeper({ sql: options.sql, clock: options.clock, worker: options.worker });
  }

  /** Starts claiming on wake-ups and timers (until then only runOnce/drain claim). */
  start(): void {
    this.#started = true;
    this.wake();
  }

  /** Asks for a claim soon; cheap to call often. */
  wake(): void {
    if (this.#stopped || !this.#started) return;
    if (this.#ticking) {
      this.#again = true;
      return;
    }
    // Idle: claim at once (lowest latency for a new event). Busy: wait a
    // moment so that one claim round trip refills several finished slots.
    this.#schedule(this.#inFlight.size === 0 ? 0 : REFILL_DELAY_MS);
  }

  /**
   * Claims once, up to the free capacity, and waits for those attempts to
   * finish, results recorded. Returns how many it claimed. Tests drive the
   * queue with this.
   */
  async runOnce(): Promise<number> {
    const claimed = await this.#claim(this.#o.globalConcurrency - this.#inFlight.size);
    await Promise.all(claimed.map((d) => this.#unfinished.get(d.id)));
    return claimed.length;
  }

  /** Runs until nothing is due and nothing is in flight (tests). */
  async drain(): Promise<void> {
    while (true) {
      const n = await this.runOnce();
      if (n === 0 && this.#unfinished.size === 0) return;
      if (n === 0) await Promise.race(this.#unfinished.values());
    }
  }

  /**
   * Stops claiming, waits for attempts in flight to finish, results
   * recorded (each bounded by its timeout), and releases the rest.
   */
  async stop(graceMs: number): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await withTimeout(Promise.allSettled(this.#unfinished.values()), graceMs, () => []);
    // Whatever did not finish goes back to the queue for another instance (or
    // this one after a restart) instead of waiting for its lease to run out.
    await repo.releaseClaims(this.#o.sql, this.#o.worker, [...this.#unfinished.keys()]);
    this.#leases.close();
  }

  #schedule(delayMs: number): void {
    const at = Date.now() + delayMs;
    if (this.#timer !== undefined && this.#timerAt <= at) return;
    clearTimeout(this.#timer);
    this.#timerAt = at;
    // A timer inherits the log context of whoever woke the queue (a request,
    // an attempt that just finished); the claims it makes belong to no one.
    this.#timer = setTimeout(() =>
      withoutContext(() => {
        this.#timer = undefined;
        this.#timerAt = Infinity;
        void this.#tick();
      }), Math.max(0, delayMs));
  }

  async #tick(): Promise<void> {
    if (this.#stopped || this.#ticking) return;
    this.#ticking = true;
    this.#again = false;
    let capped = false;
    // The last claim's: attempts due now that a receiver's hold keeps back, and when the earliest hold ends.
    let held: { at: Date; until: Date } | undefined;
    try {
      while (!this.#stopped) {
        const room = this.#o.globalConcurrency - this.#inFlight.size;
        if (room <= 0) break; // A finishing attempt wakes the queue again.
        const limit = this.#capBound ? Math.min(room, this.#finishedSinceClaim + CLAIM_SLACK) : room;
        const { claimed, heldBack, cancelled, heldUntil, at } = await this.#claimDetailed(limit);
        this.#capBound = heldBack > 0;
        capped ||= heldBack > 0;
        held = heldUntil === undefined ? undefined : { at, until: heldUntil };
        if (claimed.length + heldBack + cancelled < limit) break; // Drained what is due.
        // With rows held back, claim again at once: the account whose cap is
        // now full is skipped, and another's attempts behind its backlog are
        // reached (fairness_test.ts).
        if (claimed.length === 0 && cancelled === 0) break;
      }
    } catch (err) {
      if (!this.#o.databaseOutage.absorb(err)) log.warn("Claiming deliveries failed: {error}", { error: String(err) });
      capped = true; // Try again soon: the database may be back in a moment.
    } finally {
      this.#ticking = false;
    }
    if (this.#stopped) return;
    if (this.#again) return this.wake();
    // While attempts are unfinished, each one that finishes wakes the queue:
    // no query for the next due time (it was one in three of the queue's
    // statements while draining a backlog), only a timer for due retries and
    // expired leases in case none finishes for a while.
    if (capped || this.#unfinished.size > 0) return this.#schedule(CAPPED_RETRY_MS);
    await this.#armForNextDue(held);
  }

  /**
   * Sleeps until the next due attempt or lease expiry. When the last claim
   * found attempts due that a hold keeps back, until the earliest hold ends
   * or something else falls due after that claim, whichever comes first: the
   * held attempts are due already, and waking for them would claim nothing
   * until the hold ends.
   */
  async #armForNextDue(held?: { at: Date; until: Date }): Promise<void> {
    try {
      const next = await repo.nextWakeAt(this.#o.sql, held?.at);
      const at = held && (next === null || held.until < next) ? held.until : next;
      const now = this.#o.clock.now().getTime();
      const delay = at ? Math.min(Math.max(0, at.getTime() - now), this.#o.idlePollMs) : this.#o.idlePollMs;
      // Leases are compared with "<": one millisecond past the expiry.
      this.#schedule(delay + 1);
    } catch {
      this.#schedule(1000);
    }
  }

  async #claim(limit: number): Promise<repo.ClaimedDelivery[]> {
    return (await this.#claimDetailed(limit)).claimed;
  }

  /** One claim (at `at`): due rows, minus what the caps and holds keep back. */
  async #claimDetailed(limit: number): Promise<repo.Claim & { at: Date }> {
    const now = this.#o.clock.now();
    if (limit <= 0 || this.#stopped) return { claimed: [], heldBack: 0, cancelled: 0, heldUntil: undefined, at: now };
    // Off the hot path: a lease only expires when a worker died.
    if (now.getTime() - this.#leaseCheckedAt >= LEASE_CHECK_MS || now.getTime() < this.#leaseCheckedAt) {
      this.#leaseCheckedAt = now.getTime();
      await repo.requeueExpiredLeases(this.#o.sql, now);
    }
    // One round trip: the stored function locks, cancels, counts the caps and marks in flight.
    this.#finishedSinceClaim = 0;
    const started = performance.now();
    const claim = await repo.claim(
      this.#o.sql,
      now,
      limit,
      this.#o.caps,
      this.#o.worker,
      new Date(now.getTime() + LEASE_MS),
    );
    this.#o.observe("claim", (performance.now() - started) / 1000, claim.claimed.length);
    for (const d of claim.claimed) this.#start(d);
    return { ...claim, at: now };
  }

  #start(d: repo.ClaimedDelivery): void {
    // Every line logged for this attempt names it and its webhook.
    const stop = this.#leases.hold(d);
    let exchanged: () => void = () => {};
    this.#inFlight.set(d.id, new Promise<void>((done) => exchanged = done));
    const run = withContext({ deliveryId: d.id, webhookId: d.webhookId }, async () => {
      const freeSlot = () => {
        if (!this.#inFlight.delete(d.id)) return;
        exchanged();
        this.wake();
      };
      try {
        const started = performance.now();
        const sent = await this.#o.send(d, stop).finally(freeSlot);
        const exchanged = performance.now();
        this.#o.observe("exchange", (exchanged - started) / 1000);
        await this.#o.complete(d, sent);
        this.#o.observe("record", (performance.now() - exchanged) / 1000);
      } catch (err) {
        // The attempt stays in flight until its lease runs out, then is retried.
        log.error("Delivery {id} could not be recorded: {error}", { id: d.id, error: String(err) });
      } finally {
        freeSlot();
        this.#leases.release(d.id);
        this.#unfinished.delete(d.id);
        // Its row has left the caps' count: room for another claim of its account.
        this.#finishedSinceClaim++;
        this.wake();
      }
    });
    this.#unfinished.set(d.id, run);
  }
}
