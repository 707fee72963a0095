/**
 * The in-process queue. PostgreSQL is the source of truth; this only decides
 * when to claim and when to send. It claims right after a wake-up (a local
 * emit, a NOTIFY from another instance, a finished exchange), at the next due
 * retry, or when a lease runs out.
 *
 * One instance at a time sends an account's attempts: a claim takes the
 * accounts of what it returns (`repo.claim`), and this process keeps them
 * while it has attempts of them unfinished (`lease_keeper.ts`). So the caps,
 * per event (spec 6.3: 3), per webhook and per account, are counted here,
 * from this process's exchanges under way, and hold over all instances: no
 * other instance sends to the same account meanwhile.
 *
 * A claim reserves ahead (RESERVE): the attempts it returns wait here, and
 * each starts the moment the caps let it (`#startReady`), with no round trip
 * to the database between one exchange's end and the next one's start. An
 * attempt then has two parts: its HTTP exchange (`send`), whose slot is free
 * as soon as it ends, and the recording of its result (`complete`, which the
 * result writer batches with others: one completer for the process). A claim
 * writes nothing to the attempts it returns: they stay pending in the
 * database, and every later claim passes over them (this process hands it
 * the ids of all its unfinished attempts), until their results have
 * committed. The account's lease is held all that time, so an instance that
 * dies before that sends nothing more, and another sends the attempt again
 * once the lease runs out (at least once).
 */
import { getLogger, withContext } from "@logtape/logtape";
import type { Sql } from "../db/client.ts";
import type { DatabaseOutage } from "../db/outage.ts";
import type { Clock } from "../shared/clock.ts";
import { withoutContext } from "../shared/log.ts";
import { withTimeout } from "../shared/with_timeout.ts";
import * as repo from "./repo.ts";
import { CapCount } from "./caps.ts";
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
  /** Exchanges under way over all instances (this one holds their accounts): per event (spec 6.3: 3), per webhook, per account. */
  caps: repo.Caps;
  /** The HTTP exchange of one attempt; `stop` aborts when its lease is lost. Its slot is free once this settles. */
  send(d: repo.ClaimedDelivery, stop: AbortSignal): Promise<S>;
  /** Records what `send` got; the attempt stays this process's (its account's lease held) until this settles. */
  complete(d: repo.ClaimedDelivery, sent: S): Promise<unknown>;
  /**
   * Whether an exchange failed. Its webhook's reserved attempts then wait
   * until its result is recorded, and go back to the queue: the next claim
   * sees the hold (a receiver's Retry-After) or the disabling the failure
   * recorded, which a reserved attempt, claimed before, would not.
   */
  failed?(sent: S): boolean;
  /** Where a claim that finds the database unreachable is reported (one warning per outage, not one per claim). */
  databaseOutage: Pick<DatabaseOutage, "absorb">;
  /** Longest sleep when nothing is known to be due (a safety net under NOTIFY). */
  idlePollMs?: number;
  /** How often at least a claim scans the due order from its start (FLOOR_REFRESH_MS). */
  floorRefreshMs?: number;
  /** Told how long each claim call (and how many rows it took), exchange and recording took, in seconds. */
  observe?: (stage: "claim" | "exchange" | "record", seconds: number, rows?: number) => void;
}

/** Work held back by a cap, and due work while attempts are unfinished, is looked at again this soon. */
const CAPPED_RETRY_MS = 250;
/** Finished attempts are let to accumulate this long, so one claim refills many slots. */
const REFILL_DELAY_MS = 2;
/**
 * The same, once the account of the attempt that finished has as many
 * reserved attempts waiting here as it may have exchanges (`perAccount`):
 * the freed slot is refilled from them at once, and the claim waits for more
 * to finish, so while one account drains a backlog the claims are fewer and
 * larger. Side by side (tests/bench/drain_ab.ts, with RESERVE 4 against 2):
 * 54 rows a claim instead of 29, 3.4 ms in PostgreSQL against 2.1, slots busy
 * 24 of 32 against 19, 5,226 deliveries/s against 4,366. 20 ms is about 100
 * exchanges at that rate, fewer than RESERVE leaves waiting.
 */
const FULL_REFILL_DELAY_MS = 20;
/** Expired leases are looked for at most this often (the sweep does it too). */
const LEASE_CHECK_MS = 500;
/**
 * A claim starts its scans of the due order this long before the floor the
 * last claim gave (`repo.DueFloor`): an attempt is due from its event's
 * emission, before its commit, so one committed after that claim may sit
 * just before its floor.
 */
const FLOOR_MARGIN_MS = 5_000;
/**
 * At least this often, and after expired leases were put back, a claim scans
 * the due order from its start: an attempt put back in the queue keeps its
 * place, which may be before the floor (a lease that ran out, another
 * instance's shutdown). Such a scan steps over every entry that attempts
 * finished since the last VACUUM left: 13 ms for a million.
 */
const FLOOR_REFRESH_MS = 1_000;
/**
 * A claim reserves up to this many times what the caps let be sent at once
 * (per event, webhook and account, and this process's slots): the attempts
 * beyond what is sent wait here, and one starts the moment an
 * exchange ends, with no round trip to the database in between. While
 * draining a backlog of one account, a slot used to wait about as long for
 * its next claim as for its exchange; at 2, once exchanges took 4 ms, the
 * slots waited for claims again (19 of 32 busy).
 */
const RESERVE = 4;
/**
 * A reserved attempt that waited longer than this for the caps goes back to
 * the queue instead of out: it carries the webhook's URL and secrets as its
 * claim read them, and a PATCH, a rotation or a disabling since then must
 * apply to it as to any attempt claimed after it. While draining, one waits
 * about an exchange (10 ms); behind a hanging receiver, until its timeout.
 */
const RESERVE_WAIT_MS = 1_000;
/**
 * Once a cap has held rows back, a claim asks for the attempts finished since
 * the last one (the room they left) and this many more, not for every free
 * slot: each row it reads and the caps then hold back is work for nothing.
 * Asking for 52 rows of an account with room for 12 took 2.1 to 2.3 ms in
 * PostgreSQL, asking for 12 1.2 ms (when a claim still locked every row it
 * read).
 */
const CLAIM_SLACK = 8;

export class DeliveryQueue<S = unknown> {
  readonly #o: Required<QueueOptions<S>>;
  /** The caps a claim reserves within: RESERVE times those the exchanges are held to. */
  readonly #reserveCaps: repo.Caps;
  /** Attempts whose exchange is under way: the slots taken, and what the caps count. */
  readonly #inFlight = new Map<string, repo.ClaimedDelivery>();
  /**
   * #inFlight counted per event, webhook and account, kept in step with it
   * (`#startReady` adds, the end of an exchange removes). Counted afresh at
   * every exchange's end, it took 3.5 % of the process's busy time while
   * draining a backlog (a V8 profile of tests/bench/drain_ab.ts).
   */
  readonly #exchanges = new CapCount();
  /** Claimed attempts waiting for the caps to let their exchange start, in claim order; `go` starts it. */
  readonly #ready = new Map<string, { d: repo.ClaimedDelivery; go: (start: boolean) => void; at: number }>();
  /**
   * #ready counted per account, kept in step with it (`#putReady`,
   * `#takeReady`): what an exchange's end asks of it (`#wakeAfter`,
   * `#startReady`) without a walk over every reserved attempt, up to
   * RESERVE times the slots, at each of thousands of exchanges a second.
   */
  readonly #readyPerAccount = new Map<string, number>();
  /** Attempts not finished yet, their result not committed: exchanges under way, and results being recorded. */
  readonly #unfinished = new Map<string, Promise<void>>();
  readonly #leases: LeaseKeeper;
  #ticking = false;
  /** The soonest a wake during a claim asked for the next one (Infinity: none asked). */
  #againMs = Infinity;
  #stopped = false;
  #started = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #timerAt = Infinity;
  #leaseCheckedAt = -Infinity;
  /** Whether the last claim found rows that a cap held back. */
  #capBound = false;
  /** Exchanges ended since the last claim started. */
  #finishedSinceClaim = 0;
  /** Whether a claim has taken accounts for this process (`repo.releaseClaims` gives them back). */
  #tookAccounts = false;
  /** Where the last claim said the next may start (undefined: from the start). */
  #floor: repo.DueFloor | undefined;
  /** When a claim last scanned from the start (performance.now()). */
  #floorSince = -Infinity;
  /** Webhooks with a failed exchange whose result is being recorded (how many): none of their reserved attempts starts. */
  readonly #paused = new Map<string, number>();

  constructor(options: QueueOptions<S>) {
    this.#o = {
      idlePollMs: 60_000,
      floorRefreshMs: FLOOR_REFRESH_MS,
      observe: () => {},
      failed: () => false,
      ...options,
    };
    const { perEvent, perWebhook, perAccount, slots } = options.caps;
    this.#reserveCaps = {
      perEvent: RESERVE * perEvent,
      perWebhook: RESERVE * perWebhook,
      perAccount: RESERVE * perAccount,
      slots: RESERVE * slots,
    };
    this.#leases = new LeaseKeeper({ sql: options.sql, clock: options.clock, worker: options.worker });
  }

  /** Starts claiming on wake-ups and timers (until then only runOnce/drain claim). */
  start(): void {
    this.#started = true;
    this.wake();
  }

  /** Asks for a claim soon; cheap to call often. */
  wake(): void {
    this.#wake(REFILL_DELAY_MS);
  }

  /**
   * Idle: claim at once (lowest latency for a new event). Busy: in
   * `busyDelayMs`, so that one claim round trip refills several finished
   * slots.
   */
  #wake(busyDelayMs: number): void {
    if (this.#stopped || !this.#started) return;
    if (this.#ticking) {
      this.#againMs = Math.min(this.#againMs, busyDelayMs);
      return;
    }
    this.#schedule(this.#inFlight.size === 0 ? 0 : busyDelayMs);
  }

  /** The wake of an attempt of `accountId` that finished: later while the account has plenty reserved. */
  #wakeAfter(accountId: string): void {
    const reserved = this.#readyPerAccount.get(accountId) ?? 0;
    this.#wake(reserved >= this.#o.caps.perAccount ? FULL_REFILL_DELAY_MS : REFILL_DELAY_MS);
  }

  /**
   * Claims once, up to the free capacity, and waits for those attempts to
   * finish, results recorded. Returns how many it claimed. Tests drive the
   * queue with this.
   */
  async runOnce(): Promise<number> {
    // From the start of the due order, whatever the last claim found: a test's rows may be anywhere in it.
    this.#floor = undefined;
    const claimed = await this.#claim(this.#room());
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
    // Reserved attempts are not started: pending in the database, another instance takes them once released below.
    for (const { go } of this.#ready.values()) go(false);
    this.#ready.clear();
    this.#readyPerAccount.clear();
    await withTimeout(Promise.allSettled(this.#unfinished.values()), graceMs, () => []);
    // Whatever did not finish goes back to the queue for another instance (or
    // this one after a restart) instead of waiting for its lease to run out.
    // A process that never claimed holds nothing: no statement (its database may be away).
    if (this.#tookAccounts) await repo.releaseClaims(this.#o.sql, this.#o.worker, [...this.#unfinished.keys()]);
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
    this.#againMs = Infinity;
    let capped = false;
    // The last claim's: attempts due now that a receiver's hold keeps back, and when the earliest hold ends.
    let held: { at: Date; until: Date } | undefined;
    try {
      while (!this.#stopped) {
        const room = this.#room();
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
    if (this.#againMs < Infinity) return this.#wake(this.#againMs);
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
      // Due already, yet the claim just before left it: its account is
      // another instance's (or its cap is full there), which this one hears
      // nothing of when it lets go. Looked at again soon, not in a loop.
      // Leases are compared with "<": one millisecond past the expiry.
      this.#schedule((delay === 0 ? CAPPED_RETRY_MS : delay) + 1);
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
    if (limit <= 0 || this.#stopped) {
      return { claimed: [], heldBack: 0, cancelled: 0, heldUntil: undefined, floor: this.#floor, at: now };
    }
    // Off the hot path: a lease only expires when a worker died.
    if (now.getTime() - this.#leaseCheckedAt >= LEASE_CHECK_MS || now.getTime() < this.#leaseCheckedAt) {
      this.#leaseCheckedAt = now.getTime();
      if (await repo.requeueExpiredLeases(this.#o.sql, now) > 0) this.#floor = undefined;
    }
    if (performance.now() - this.#floorSince >= this.#o.floorRefreshMs) this.#floor = undefined;
    const floor = this.#floor && { runAt: new Date(this.#floor.runAt.getTime() - FLOOR_MARGIN_MS), id: "" };
    if (!floor) this.#floorSince = performance.now();
    // One round trip: the stored function reads, cancels, takes the accounts and counts the caps.
    this.#finishedSinceClaim = 0;
    const started = performance.now();
    const claim = await repo.claim(
      this.#o.sql,
      now,
      limit,
      this.#reserveCaps,
      this.#o.worker,
      new Date(now.getTime() + LEASE_MS),
      [...this.#inFlight.values(), ...[...this.#ready.values()].map((r) => r.d)],
      [...this.#unfinished.keys()],
      floor,
    );
    this.#floor = claim.floor;
    this.#o.observe("claim", (performance.now() - started) / 1000, claim.claimed.length);
    this.#tookAccounts ||= claim.claimed.length > 0;
    for (const d of claim.claimed) this.#accept(d);
    this.#startReady();
    return { ...claim, at: now };
  }

  /** What a claim may still reserve: RESERVE times the slots, less what is sent or waits. */
  #room(): number {
    return RESERVE * this.#o.globalConcurrency - this.#inFlight.size - this.#ready.size;
  }

  /**
   * Starts, in claim order, each reserved attempt that every cap lets be sent
   * now, counted over this process's exchanges under way (it holds the
   * accounts of all of them, see `repo.claim`), as the claim counts them: at
   * most `perEvent` of one event, `perWebhook` to one webhook, and for an
   * account, half of what the other accounts leave of the slots, divided
   * among the accounts waiting here and one more, never more than
   * `perAccount` (`repo.Caps`).
   *
   * It runs at every exchange's end. The walk stops once no account may
   * start another: an account's share only shrinks as others start, so one
   * found full stays full until the walk ends. While one account drains a
   * backlog, the walk ends at the attempt after the one it starts, where it
   * went on over every reserved attempt (about a hundred).
   */
  #startReady(): void {
    if (this.#ready.size === 0 || this.#stopped || this.#inFlight.size >= this.#o.globalConcurrency) return;
    const { caps } = this.#o;
    const count = this.#exchanges;
    // The accounts that share what is left: those waiting here that are not
    // full alone (at half of what the others leave), as the claim counts the
    // accounts of the rows it may mark. An account not among them is full
    // (its share among them and one more is smaller still).
    const waiting = new Set<string>();
    for (const a of this.#readyPerAccount.keys()) if (count.account(a) < count.share(a, 1, caps)) waiting.add(a);
    // Those that may still start one.
    const open = new Set(waiting);
    const now = performance.now();
    for (const { d, go, at } of this.#ready.values()) {
      if (open.size === 0 || this.#inFlight.size >= this.#o.globalConcurrency) break;
      if (!open.has(d.accountId)) continue;
      if (!count.eventAndWebhookFit(d, caps) || this.#paused.has(d.webhookId)) continue;
      if (count.account(d.accountId) >= count.share(d.accountId, waiting.size, caps)) {
        open.delete(d.accountId);
        continue;
      }
      this.#takeReady(d);
      // Not started: pending in the database, a claim takes it again once it is no longer unfinished here.
      if (now - at > RESERVE_WAIT_MS) {
        go(false);
        continue;
      }
      this.#inFlight.set(d.id, d);
      count.add(d);
      go(true);
    }
  }

  /** Reserves `d` here until `#startReady` starts it or it is left unsent. */
  #putReady(d: repo.ClaimedDelivery, go: (start: boolean) => void): void {
    this.#ready.set(d.id, { d, go, at: performance.now() });
    this.#readyPerAccount.set(d.accountId, (this.#readyPerAccount.get(d.accountId) ?? 0) + 1);
  }

  /** Takes `d` out of the reserved attempts. */
  #takeReady(d: repo.ClaimedDelivery): void {
    if (!this.#ready.delete(d.id)) return;
    const left = (this.#readyPerAccount.get(d.accountId) ?? 1) - 1;
    if (left > 0) this.#readyPerAccount.set(d.accountId, left);
    else this.#readyPerAccount.delete(d.accountId);
  }

  /**
   * Takes a claimed attempt: its lease kept from now on, its exchange started
   * once the caps let it (`#startReady`), then its result recorded.
   */
  #accept(d: repo.ClaimedDelivery): void {
    const stop = this.#leases.hold(d);
    let go: (start: boolean) => void = () => {};
    const started = new Promise<boolean>((resolve) => go = resolve);
    this.#putReady(d, go);
    // Every line logged for this attempt names it and its webhook.
    const run = withContext({ deliveryId: d.id, webhookId: d.webhookId }, async () => {
      // The exchange has ended: the caps no longer count it, room for another.
      const freeSlot = () => {
        if (!this.#inFlight.delete(d.id)) return;
        this.#exchanges.remove(d);
        this.#finishedSinceClaim++;
        this.#startReady();
        this.#wakeAfter(d.accountId);
      };
      let failed = false;
      try {
        if (!await started) return; // Stopping, or its webhook failed, or stale: left unsent.
        this.#leases.began(d.id);
        const began = performance.now();
        const sent = await this.#o.send(d, stop).then((sent) => {
          // Before its slot frees: no reserved attempt of the webhook starts in it.
          failed = this.#o.failed(sent);
          if (failed) this.#paused.set(d.webhookId, (this.#paused.get(d.webhookId) ?? 0) + 1);
          return sent;
        }).finally(freeSlot);
        const exchanged = performance.now();
        this.#o.observe("exchange", (exchanged - began) / 1000);
        await this.#o.complete(d, sent);
        this.#o.observe("record", (performance.now() - exchanged) / 1000);
      } catch (err) {
        // The attempt is taken again once this process lets go of it (below), or once its lease runs out.
        log.error("Delivery {id} could not be recorded: {error}", { id: d.id, error: String(err) });
      } finally {
        freeSlot();
        if (failed) this.#releaseReserved(d.webhookId);
        this.#leases.release(d.id);
        this.#unfinished.delete(d.id);
        if (failed) this.wake();
        else this.#wakeAfter(d.accountId);
      }
    });
    this.#unfinished.set(d.id, run);
  }

  /**
   * A failed exchange's result is recorded: the webhook's reserved attempts
   * are left unsent (pending in the database), and the next claim decides on
   * them, as it reads the webhook now.
   */
  #releaseReserved(webhookId: string): void {
    const left = (this.#paused.get(webhookId) ?? 1) - 1;
    if (left > 0) this.#paused.set(webhookId, left);
    else this.#paused.delete(webhookId);
    for (const { d, go } of this.#ready.values()) {
      if (d.webhookId !== webhookId) continue;
      this.#takeReady(d);
      go(false);
    }
  }
}
