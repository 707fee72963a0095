/**
 * Requests waiting for a message (GET .../messages/wait), per inbox, in this
 * process: woken when a message may have arrived for their inbox (a NOTIFY
 * from the instance that stored it, or a local publication) or when the inbox
 * was deleted.
 */
import type client from "prom-client";
import type { NotificationHub } from "../notifications/hub.ts";
import { createKeyedWaiters, type KeyedWaiters } from "../notifications/waiters.ts";
import { INBOX_CHANNEL } from "../inboxes/service.ts";

/** The message waiters: keyed by inbox id. */
export type MessageWaiters = KeyedWaiters;

/** Builds the waiters, subscribed to the hub, with the `inbox_message_waiters` gauge. */
export function createMessageWaiters(
  deps: { hub: Pick<NotificationHub, "subscribe">; registry: client.Registry },
): MessageWaiters {
  return createKeyedWaiters(deps, INBOX_CHANNEL, {
    name: "inbox_message_waiters",
    help: "Requests waiting for a message (GET .../messages/wait) in this process.",
  });
}
