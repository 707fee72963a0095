/**
 * Requests waiting for a message, per inbox, in this process. A waiter holds
 * no database connection: it is a callback in a map, woken when a message may
 * have arrived for its inbox (a NOTIFY from the instance that stored it,
 * fanned out by the notification hub, or a local publication) or when the
 * inbox was deleted. A woken waiter looks again in the database; a wake-up
 * that finds nothing costs one query, a lost one would cost a whole timeout,
 * so after the hub reconnects every waiter is woken.
 */
import client from "prom-client";
import type { NotificationHub } from "../notifications/hub.ts";
import { INBOX_CHANNEL } from "../inboxes/service.ts";

/** How a wait ended. */
export type WaitEnd = "woken" | "timeout" | "aborted";

/** One armed wait: armed before the database is read, so no wake-up between the read and the wait is lost. */
export interface ArmedWait {
  /** Resolves at the first wake-up since arming, after `ms`, or when `signal` aborts. */
  wait(ms: number, signal?: AbortSignal): Promise<WaitEnd>;
  /** Forgets the waiter (always called, in a finally). */
  disarm(): void;
}

/** The waiters of this process. */
export class MessageWaiters {
  readonly #byInbox = new Map<string, Set<() => void>>();
  #count = 0;

  /** How many requests are waiting now. */
  get size(): number {
    return this.#count;
  }

  /** Registers a waiter for the inbox. */
  arm(inboxId: string): ArmedWait {
    let woken = false;
    let wake: (() => void) | undefined;
    const onWake = () => {
      woken = true;
      wake?.();
    };
    let set = this.#byInbox.get(inboxId);
    if (!set) this.#byInbox.set(inboxId, set = new Set());
    set.add(onWake);
    this.#count++;
    let armed = true;
    return {
      wait: (ms, signal) => {
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
        if (set.size === 0 && this.#byInbox.get(inboxId) === set) this.#byInbox.delete(inboxId);
      },
    };
  }

  /** Wakes the waiters of one inbox. */
  wake(inboxId: string): void {
    for (const onWake of this.#byInbox.get(inboxId) ?? []) onWake();
  }

  /** Wakes every waiter (notifications may have been lost). */
  wakeAll(): void {
    for (const set of this.#byInbox.values()) for (const onWake of set) onWake();
  }
}

/** Builds the waiters, subscribed to the hub, with the `inbox_message_waiters` gauge. */
export function createMessageWaiters(
  deps: { hub: Pick<NotificationHub, "subscribe">; registry: client.Registry },
): MessageWaiters {
  const waiters = new MessageWaiters();
  deps.hub.subscribe(INBOX_CHANNEL, {
    onNotify: (inboxId) => waiters.wake(inboxId),
    onResync: () => waiters.wakeAll(),
  });
  new client.Gauge({
    name: "inbox_message_waiters",
    help: "Requests waiting for a message (GET .../messages/wait) in this process.",
    registers: [deps.registry],
    collect() {
      this.set(waiters.size);
    },
  });
  return waiters;
}
