/**
 * Requests waiting for a message (GET .../messages/wait) in this process, in
 * one group per inbox (wait_groups.ts): woken when a message may have arrived
 * for their inbox (a NOTIFY from the instance that stored it, or a local
 * publication) or when the inbox was deleted.
 */
import client from "prom-client";
import type { Sql } from "../db/client.ts";
import type { NotificationHub } from "../notifications/hub.ts";
import { createKeyedWaiters } from "../notifications/waiters.ts";
import type { Clock } from "../shared/clock.ts";
import { INBOX_CHANNEL } from "../inboxes/service.ts";
import { WaitGroups } from "./wait_groups.ts";

/** The message waits of this process. */
export interface MessageWaiters {
  groups: WaitGroups;
  /** Shutting down: every wait ends at once. */
  close(): void;
}

/** Builds the waits' groups, woken through the hub, with the `inbox_message_waiters` gauge. */
export function createMessageWaiters(
  deps: { sql: Sql; clock: Clock; hub: Pick<NotificationHub, "subscribe">; registry: client.Registry },
): MessageWaiters {
  const waiters = createKeyedWaiters(deps, INBOX_CHANNEL);
  const reads = new client.Counter({
    name: "inbox_message_wait_reads_total",
    help: "Reads of the wait groups (one per inbox with waits and wake-up, whatever the number of its waits).",
    registers: [deps.registry],
  });
  const read = new client.Counter({
    name: "inbox_message_wait_messages_read_total",
    help: "Messages the wait groups' reads looked at (what arrived, not what the inboxes hold).",
    registers: [deps.registry],
  });
  const groups = new WaitGroups({
    sql: deps.sql,
    clock: deps.clock,
    waiters,
    onRead: (messages) => {
      reads.inc();
      read.inc(messages);
    },
  });
  new client.Gauge({
    name: "inbox_message_waiters",
    help: "Requests waiting for a message (GET .../messages/wait) in this process.",
    registers: [deps.registry],
    collect() {
      this.set(groups.size);
    },
  });
  return {
    groups,
    close() {
      waiters.close();
      groups.close();
    },
  };
}
