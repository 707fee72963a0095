/**
 * Waits of one inbox in groups: every request waiting for a message of an
 * inbox (GET .../messages/wait) in this process shares one read per wake-up,
 * and that read covers only what arrived after the waits' positions, not the
 * inbox's history. A wait joins once it has looked at everything already
 * there (its own first read), at the position of the inbox's last message;
 * each read moves every wait that found nothing to the last message read.
 *
 * Why: 300 waits with a filter that never matched, woken by 10 mails of
 * 100 KB, each read the whole inbox again on every wake-up (3,000 scans of
 * every body), which took another tenant's p95 from 4-5 ms to 1.9-2.9 s
 * (tests/bench/README.md has the figures with groups).
 *
 * A read is armed before it starts (notifications/waiters.ts), so a message
 * stored while it runs wakes the group again. A wait that joins after the
 * group read past its position makes the group read again for it.
 */
import type { Sql } from "../db/client.ts";
import type { KeyedWaiters } from "../notifications/waiters.ts";
import type { Clock } from "../shared/clock.ts";
import * as repo from "./repo.ts";
import type { MessageFilters } from "./schemas.ts";

/** How a wait in a group ended. */
export type GroupWaitEnd =
  /** A message matched: its id. */
  | { how: "matched"; messageId: string }
  /** The inbox is no longer one of the account's live inboxes. */
  | { how: "gone" }
  /** The time ran out, the client left, or the process is shutting down; `afterSeq`: where the wait got to. */
  | { how: "timeout" | "aborted" | "closed"; afterSeq: string }
  /** The group's read failed (the database did not answer). */
  | { how: "failed"; error: unknown };

/** Messages read per group read; more are read at once after. */
const GROUP_READ_LIMIT = 100;

interface Member {
  afterSeq: bigint;
  filters: MessageFilters;
  end(how: GroupWaitEnd): void;
}

class InboxGroup {
  readonly members = new Set<Member>();
  /** The `seq` of the last message any read of this group has seen. */
  seen: bigint;
  /** Set while a read is on its way, and when a wait joined behind what the group has seen. */
  reading = false;
  stale = false;
  /** Wakes the group's wait (a member joined behind it, or left). */
  nudge = new AbortController();

  constructor(
    readonly accountId: string,
    readonly inboxId: string,
    readonly expiresAt: Date,
    seen: bigint,
  ) {
    this.seen = seen;
  }
}

/** The wait groups of this process. */
export class WaitGroups {
  readonly #groups = new Map<string, InboxGroup>();
  #waits = 0;

  constructor(
    private readonly deps: {
      sql: Sql;
      clock: Clock;
      waiters: KeyedWaiters;
      /** Told of every group read and how many messages it read. */
      onRead?: (messages: number) => void;
    },
  ) {}

  /** Waits held now. */
  get size(): number {
    return this.#waits;
  }

  /** Groups reading now (one per inbox with waits). */
  get groups(): number {
    return this.#groups.size;
  }

  /**
   * Waits in the inbox's group, from `afterSeq` (the wait has looked at every
   * message up to it), for the first later message that matches `filters`,
   * until `ms` pass or `signal` aborts.
   */
  wait(
    inbox: { accountId: string; id: string; expiresAt: Date },
    afterSeq: string,
    filters: MessageFilters,
    ms: number,
    signal: AbortSignal,
  ): Promise<GroupWaitEnd> {
    const at = BigInt(afterSeq);
    let group = this.#groups.get(inbox.id);
    const fresh = !group;
    if (!group) {
      group = new InboxGroup(inbox.accountId, inbox.id, inbox.expiresAt, at);
      this.#groups.set(inbox.id, group);
    }
    const joined = group;
    if (signal.aborted) return Promise.resolve({ how: "aborted", afterSeq });
    this.#waits++;
    return new Promise<GroupWaitEnd>((resolve) => {
      const member: Member = {
        afterSeq: at,
        filters,
        end: (how) => {
          if (!joined.members.delete(member)) return;
          this.#waits--;
          clearTimeout(timer);
          signal.removeEventListener("abort", onAbort);
          if (joined.members.size === 0) joined.nudge.abort();
          resolve(how);
        },
      };
      const timer = setTimeout(() => member.end({ how: "timeout", afterSeq: String(member.afterSeq) }), ms);
      const onAbort = () => member.end({ how: "aborted", afterSeq: String(member.afterSeq) });
      signal.addEventListener("abort", onAbort, { once: true });
      joined.members.add(member);
      // A read on its way, or one already past this wait's position, did not look for it: read again.
      if (!fresh && (joined.reading || joined.seen > at)) {
        joined.stale = true;
        joined.nudge.abort();
      }
      if (fresh) void this.#run(joined);
    });
  }

  /** Shutting down: every wait ends at once ("closed"). */
  close(): void {
    for (const group of this.#groups.values()) {
      for (const member of [...group.members]) member.end({ how: "closed", afterSeq: String(member.afterSeq) });
    }
  }

  /** The group's loop: one read for all its members per wake-up, until it has none. */
  async #run(group: InboxGroup): Promise<void> {
    try {
      while (group.members.size > 0) {
        const armed = this.deps.waiters.arm(group.inboxId);
        try {
          const readers = [...group.members];
          group.reading = true;
          group.stale = false;
          let arrivals: repo.Arrivals;
          try {
            arrivals = await repo.matchArrivals(
              this.deps.sql,
              group.accountId,
              group.inboxId,
              this.deps.clock.now(),
              readers.map((m) => ({ afterSeq: String(m.afterSeq), filters: m.filters })),
              GROUP_READ_LIMIT,
            );
          } finally {
            group.reading = false;
          }
          this.deps.onRead?.(arrivals.read);
          if (!arrivals.live) {
            for (const member of [...group.members]) member.end({ how: "gone" });
            return;
          }
          const last = arrivals.lastSeq === null ? undefined : BigInt(arrivals.lastSeq);
          if (last !== undefined && last > group.seen) group.seen = last;
          readers.forEach((member, i) => {
            const match = arrivals.matches[i];
            if (match) return member.end({ how: "matched", messageId: match });
            if (last !== undefined && last > member.afterSeq) member.afterSeq = last;
          });
          if (arrivals.more || group.stale) continue;
          if (group.members.size === 0) return;
          group.nudge = new AbortController();
          // Woken to answer 404 when the inbox expires, too.
          const untilExpiry = group.expiresAt.getTime() - this.deps.clock.now().getTime() + 1;
          const end = await armed.wait(Math.max(0, untilExpiry), group.nudge.signal);
          if (end === "closed") return this.close();
        } finally {
          armed.disarm();
        }
      }
    } catch (error) {
      for (const member of [...group.members]) member.end({ how: "failed", error });
    } finally {
      if (this.#groups.get(group.inboxId) === group) this.#groups.delete(group.inboxId);
    }
  }
}
