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

/** One armed wait: armed before the database is read, so no wake-up between the read and the wait is lost. */
export interface ArmedWait {
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
  readonly #byKey = new Map<string, Set<() => void>>();
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
    let set = this.#byKey.get(key);
    if (!set) this.#byKey.set(key, set = new Set());
    set.add(onWake);
    this.#count++;
    let armed = true;
    return {
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
        if (set.size === 0 && this.#byKey.get(key) === set) this.#byKey.delete(key);
      },
    };
  }

  /** Wakes the waiters of one key. */
  wake(key: string): void {
    for (const onWake of this.#byKey.get(key) ?? []) onWake();
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
    for (const set of this.#byKey.values()) for (const onWake of set) onWake();
  }
}

/**
 * Waiters subscribed to a hub channel whose payload is their key; with
 * `gauge`, counted by a gauge of how many wait (a caller that counts
 * something else, such as open streams, keeps its own).
 */
export function createKeyedWaiters(
  deps: { hub: Pick<NotificationHub, "subscribe">; registry: client.Registry },
  channel: string,
  gauge?: { name: string; help: string },
): KeyedWaiters {
  const waiters = new KeyedWaiters();
  deps.hub.subscribe(channel, {
    onNotify: (key) => waiters.wake(key),
    onResync: () => waiters.wakeAll(),
  });
  if (gauge) {
    new client.Gauge({
      ...gauge,
      registers: [deps.registry],
      collect() {
        this.set(waiters.size);
      },
    });
  }
  return waiters;
}
