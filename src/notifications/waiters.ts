/**
 * In-process waiters for notifications: requests that hold no database
 * connection while they wait (a long poll, an event stream) register a
 * callback here, and the notification hub's fan-out wakes them. A woken
 * waiter looks again in the database; a wake-up that finds nothing costs one
 * query, a lost one would cost a whole timeout, so after the hub reconnects
 * every waiter is woken.
 */
import client from "prom-client";
import type { NotificationHub } from "./hub.ts";

/** How a wait ended: "closed" when the process is shutting down (`KeyedWaiters.close`). */
export type WaitEnd = "woken" | "timeout" | "aborted" | "closed";

let stamps = 0;

/** The next point in one order of this process's wake-ups and database reads (see `ArmedWait.lastWake`). */
export function nextStamp(): number {
  return ++stamps;
}

/** One armed wait: armed before the database is read, so no wake-up between the read and the wait is lost. */
export interface ArmedWait {
  /**
   * The stamp (`nextStamp`) of the key's latest wake-up when this waiter was
   * armed. A read that started after it sees every change notified before
   * the arming; later changes wake this waiter. So waiters of one key can
   * share a read that started after it instead of each making its own.
   */
  readonly lastWake: number;
  /** Resolves at the first wake-up since arming, after `ms`, or when `signal` aborts. */
  wait(ms: number, signal?: AbortSignal): Promise<WaitEnd>;
  /** Forgets the waiter (always called, in a finally). */
  disarm(): void;
}

/**
 * Waiters of this process keyed by what they wait on (an inbox, an account):
 * callbacks in a map, armed before the caller reads the database and woken by
 * a notification for their key or, after the hub reconnected, all at once.
 */
export class KeyedWaiters {
  /** The waiters of each key, and the stamp of the key's latest wake-up while it had waiters. */
  readonly #byKey = new Map<string, { set: Set<() => void>; wokenAt: number }>();
  #allWokenAt = 0;
  #count = 0;
  #closed = false;

  /** How many are waiting now. */
  get size(): number {
    return this.#count;
  }

  /** Registers a waiter for `key`. */
  arm(key: string): ArmedWait {
    let woken = false;
    let wake: (() => void) | undefined;
    const onWake = () => {
      woken = true;
      wake?.();
    };
    let entry = this.#byKey.get(key);
    if (!entry) this.#byKey.set(key, entry = { set: new Set(), wokenAt: 0 });
    const set = entry.set;
    set.add(onWake);
    this.#count++;
    let armed = true;
    return {
      // A key without waiters has no read in progress either (a reader is armed while it reads), so
      // forgetting its stamp with its last waiter loses nothing.
      lastWake: Math.max(entry.wokenAt, this.#allWokenAt),
      wait: (ms, signal) => {
        if (this.#closed) return Promise.resolve("closed");
        if (woken) return Promise.resolve("woken");
        if (signal?.aborted) return Promise.resolve("aborted");
        return new Promise<WaitEnd>((resolve) => {
          const end = (how: WaitEnd) => {
            clearTimeout(timer);
            signal?.removeEventListener("abort", onAbort);
            wake = undefined;
            resolve(how);
          };
          const onAbort = () => end("aborted");
          const timer = setTimeout(() => end("timeout"), Math.max(0, ms));
          signal?.addEventListener("abort", onAbort, { once: true });
          wake = () => end("woken");
        });
      },
      disarm: () => {
        if (!armed) return;
        armed = false;
        wake = undefined;
        this.#count--;
        set.delete(onWake);
        if (set.size === 0 && this.#byKey.get(key) === entry) this.#byKey.delete(key);
      },
    };
  }

  /** Wakes the waiters of one key. */
  wake(key: string): void {
    const entry = this.#byKey.get(key);
    if (!entry) return;
    entry.wokenAt = nextStamp();
    for (const onWake of entry.set) onWake();
  }

  /**
   * Shutting down: every wait from now on ends at once ("closed"), and those
   * waiting are woken, so that long polls answer and streams end instead of
   * holding the server's shutdown for up to their whole hold.
   */
  close(): void {
    this.#closed = true;
    this.wakeAll();
  }

  /** Wakes every waiter (notifications may have been lost). */
  wakeAll(): void {
    this.#allWokenAt = nextStamp();
    for (const { set } of this.#byKey.values()) for (const onWake of set) onWake();
  }
}

/** Waiters subscribed to a hub channel whose payload is their key, counted by a gauge. */
export function createKeyedWaiters(
  deps: { hub: Pick<NotificationHub, "subscribe">; registry: client.Registry },
  channel: string,
  gauge: { name: string; help: string },
): KeyedWaiters {
  const waiters = new KeyedWaiters();
  deps.hub.subscribe(channel, {
    onNotify: (key) => waiters.wake(key),
    onResync: () => waiters.wakeAll(),
  });
  new client.Gauge({
    ...gauge,
    registers: [deps.registry],
    collect() {
      this.set(waiters.size);
    },
  });
  return waiters;
}
