/**
 * Event streams (GET /api/events/stream) open in this process, per account:
 * woken when events of their account were committed (a NOTIFY from the
 * committing instance, or a local publication), to read the log on from
 * where they are. A stream holds no database connection while it waits.
 */
import type client from "prom-client";
import type { NotificationHub } from "../notifications/hub.ts";
import { createKeyedWaiters, type KeyedWaiters } from "../notifications/waiters.ts";

/** The channel whose payload is the id of an account whose events were committed. */
export const EVENT_CHANNEL = "inbox_events";

/** The stream waiters: keyed by account id. */
export type EventStreams = KeyedWaiters;

/** Builds the stream waiters, subscribed to the hub, with the `event_streams` gauge. */
export function createEventStreams(
  deps: { hub: Pick<NotificationHub, "subscribe">; registry: client.Registry },
): EventStreams {
  return createKeyedWaiters(deps, EVENT_CHANNEL, {
    name: "event_streams",
    help: "Event streams (GET /api/events/stream) open in this process.",
  });
}
