/**
 * One notification hub per instance: a single LISTEN connection (postgres.js
 * keeps every `listen` of a client on one connection) fanned out to the
 * in-process subscribers of each channel: the delivery queue, the API-key
 * cache, and whatever waits for news next.
 *
 * NOTIFYs sent while the connection is down are lost. postgres.js reconnects
 * and subscribes again by itself, and tells us so; the hub then asks every
 * subscriber of the channel to re-check (`onResync`), since it may have
 * missed something.
 *
 * On the embedded database there is no second connection to listen on, and
 * no second process to hear from: the hub then only fans out what this
 * process publishes itself.
 */
import { getLogger } from "@logtape/logtape";
import type { Sql } from "../db/client.ts";

const log = getLogger(["inbox", "notifications"]);

/** One subscriber of a channel. */
export interface Subscriber {
  /** A notification arrived (its payload; "" when there is none). */
  onNotify(payload: string): void;
  /** Notifications may have been lost (the listening connection was re-established): look again. */
  onResync?(): void;
}

/** The hub of one instance. */
export interface NotificationHub {
  /** Adds a subscriber to `channel`; returns the function that removes it. */
  subscribe(channel: string, subscriber: Subscriber): () => void;
  /**
   * Tells this instance's subscribers at once, without waiting for the
   * NOTIFY of a commit to come back (and on the embedded database, where
   * none does). Other instances hear the NOTIFY.
   */
  publishLocal(channel: string, payload?: string): void;
  /** Starts listening on every channel with subscribers (and on those subscribed later). */
  start(): Promise<void>;
  /** Stops listening. */
  stop(): Promise<void>;
}

/** Builds a hub; with `sql` undefined it only fans out local publications. */
export function createNotificationHub(sql: Sql | undefined): NotificationHub {
  const subscribers = new Map<string, Set<Subscriber>>();
  const listening = new Map<string, Promise<{ unlisten(): Promise<void> }>>();
  let started = false;

  const each = (channel: string, call: (s: Subscriber) => void) => {
    for (const s of subscribers.get(channel) ?? []) {
      try {
        call(s);
      } catch (err) {
        log.error("A subscriber of {channel} failed: {error}", { channel, error: String(err) });
      }
    }
  };

  const listen = (channel: string) => {
    if (!sql || listening.has(channel)) return;
    let subscribed = false;
    const subscription = sql.listen(channel, (payload) => each(channel, (s) => s.onNotify(payload)), () => {
      // Called on the first subscription and again after every reconnect.
      if (subscribed) {
        log.info("Listening on {channel} again; subscribers re-check", { channel });
        each(channel, (s) => s.onResync?.());
      }
      subscribed = true;
    });
    // Awaited by start(); a channel subscribed later is only logged if it fails.
    subscription.catch((err) => log.warn("Could not listen on {channel}: {error}", { channel, error: String(err) }));
    listening.set(channel, subscription);
  };

  return {
    subscribe(channel, subscriber) {
      let set = subscribers.get(channel);
      if (!set) subscribers.set(channel, set = new Set());
      set.add(subscriber);
      if (started) listen(channel);
      return () => set.delete(subscriber);
    },
    publishLocal(channel, payload = "") {
      each(channel, (s) => s.onNotify(payload));
    },
    async start() {
      started = true;
      for (const channel of subscribers.keys()) listen(channel);
      await Promise.all(listening.values());
    },
    async stop() {
      started = false;
      const subscriptions = [...listening.values()];
      listening.clear();
      for (const s of await Promise.all(subscriptions)) await s.unlisten();
    },
  };
}
