/**
 * Event streams (GET /api/events/stream) open in this process: the waiters
 * woken when events of an account were committed (a NOTIFY from the
 * committing instance, or a local publication), the live groups that read
 * for the streams at the end of an account's log (fanout.ts), and the count
 * of open streams (`event_streams`). A stream holds no database connection
 * while it waits.
 */
import client from "prom-client";
import type { Sql } from "../db/client.ts";
import type { NotificationHub } from "../notifications/hub.ts";
import { createKeyedWaiters } from "../notifications/waiters.ts";
import { LiveGroups } from "./fanout.ts";

/** The channel whose payload is the id of an account whose events were committed. */
export const EVENT_CHANNEL = "inbox_events";

/** The event streams of this process. */
export interface EventStreams {
  live: LiveGroups;
  /** Counts a stream as open until the returned function is called. */
  opened(): () => void;
  /** Shutting down: every stream ends (its client reconnects elsewhere with Last-Event-ID). */
  close(): void;
}

/** Builds the streams' waiters (subscribed to the hub), live groups and the `event_streams` gauge. */
export function createEventStreams(
  deps: { sql: Sql; hub: Pick<NotificationHub, "subscribe">; registry: client.Registry; keepAliveMs: number },
): EventStreams {
  // Woken per account; the gauge below counts streams, not waiters (a live group has one).
  const waiters = createKeyedWaiters(deps, EVENT_CHANNEL);
  let open = 0;
  new client.Gauge({
    name: "event_streams",
    help: "Event streams (GET /api/events/stream) open in this process.",
    registers: [deps.registry],
    collect() {
      this.set(open);
    },
  });
  return {
    live: new LiveGroups({ sql: deps.sql, waiters, keepAliveMs: deps.keepAliveMs }),
    opened() {
      open++;
      let counted = true;
      return () => {
        if (counted) open--;
        counted = false;
      };
    },
    close: () => waiters.close(),
  };
}
