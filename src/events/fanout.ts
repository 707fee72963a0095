/**
 * Live event streams in groups: the streams of one account with the same
 * view of its log (types, and inboxes for a key limited to some) that stand
 * at the end of its log follow it together. One
 * waiter and one read per group and commit, and each frame encoded once and
 * handed to every member's response without a promise per stream: a commit
 * with 1,000 streams open costs one query and 1,000 enqueues, not 1,000
 * wake-ups, queries and writes.
 *
 * A member is a stream that has caught up by its own reads. It joins at its
 * position: the rows the group delivered since (kept in a short ring) are
 * handed to it at once, and rows it has already written are skipped, so the
 * switch from replay to live has no gap and no duplicate. A member whose
 * client falls behind (its response's queue is full) leaves the group and
 * catches up on its own again, so a slow client never holds the others back
 * nor makes the process hold frames for it. Keep-alive comments go to all
 * members after a silence of the group.
 */
import type { Sql } from "../db/client.ts";
import type { KeyedWaiters } from "../notifications/waiters.ts";
import * as repo from "./repo.ts";

/** How a stream's following of the group ended, and where the stream stands then. */
export interface LiveEnd {
  how: "behind" | "gap" | "aborted" | "closed" | "failed";
  cursor: string;
  error?: unknown;
}

/** A stream's side of the group: frames offered to its response. */
export interface LiveOut {
  /** Hands the event's frame to the response; false when the client has fallen behind. */
  offer(event: repo.FrameEvent): boolean;
  ping(): void;
}

/** Rows a group keeps after delivering them, for streams that join a little behind it, and their bytes at most. */
const RING_ROWS = 256;
const RING_BYTES = 1024 * 1024;
/** Events read per query, by a group and by a stream catching up on its own, and their bytes beyond the first. */
export const STREAM_READ_BATCH = 500;
/** A read's bytes: one chunk of about the stream's high-water mark (http/sse_response.ts explains the size). */
export const STREAM_READ_BYTES = 32 * 1024;

interface Member {
  cursor: bigint;
  out: LiveOut;
  end(how: LiveEnd["how"], error?: unknown): void;
}

/** One group: an account, a type filter, its members, and the one loop that reads for them. */
class LiveGroup {
  readonly members = new Set<Member>();
  /** The seq of the last row read (the rows of the filter up to it have all been delivered). */
  cursor: bigint;
  /** The ring covers every row of the filter with a seq in (ringFrom, cursor]. */
  ringFrom: bigint;
  readonly ring: { seq: bigint; row: repo.FrameEvent }[] = [];
  ringBytes = 0;
  stopped = false;
  /** Aborts the group's wait when its last member leaves. */
  idle = new AbortController();

  constructor(
    readonly view: repo.LogView,
    cursor: bigint,
  ) {
    this.cursor = cursor;
    this.ringFrom = cursor;
  }

  /** Hands rows to every member (those it has not written yet); members that fall behind leave. */
  deliver(rows: repo.FrameEvent[]): void {
    const frames = rows.map((row) => ({ seq: BigInt(row.seq), row }));
    for (const frame of frames) {
      this.ring.push(frame);
      this.ringBytes += frame.row.frame.byteLength;
      while (this.ring.length > RING_ROWS || (this.ringBytes > RING_BYTES && this.ring.length > 1)) {
        const dropped = this.ring.shift()!;
        this.ringFrom = dropped.seq;
        this.ringBytes -= dropped.row.frame.byteLength;
      }
    }
    this.cursor = frames.at(-1)!.seq;
    for (const member of this.members) {
      if (!offerAll(member, frames)) {
        this.members.delete(member);
        member.end("behind");
      }
    }
  }
}

/** Offers the frames the member has not written yet; false when its client fell behind. */
function offerAll(member: Member, frames: { seq: bigint; row: repo.FrameEvent }[]): boolean {
  let keepsUp = true;
  for (const { seq, row } of frames) {
    if (seq <= member.cursor) continue;
    keepsUp = member.out.offer(row) && keepsUp;
    member.cursor = seq;
    if (!keepsUp) return false;
  }
  return true;
}

/** The live groups of this process. */
export class LiveGroups {
  readonly #groups = new Map<string, LiveGroup>();

  constructor(
    private readonly deps: { sql: Sql; waiters: KeyedWaiters; keepAliveMs: number },
  ) {}

  /** Groups following now (for tests and metrics). */
  get size(): number {
    return this.#groups.size;
  }

  /**
   * Follows the log with the group of `view` (an account, its types, its
   * inboxes when the key is limited to some) from `cursor` (the
   * stream's position, as far as it has read and written on its own) until
   * the client goes (`signal`), falls behind, or the process shuts down.
   * Resolves with the position reached; "gap" at once when the group is
   * further than its ring reaches back to `cursor` (the stream reads on by
   * itself and comes back).
   */
  follow(view: repo.LogView, cursor: string, out: LiveOut, signal: AbortSignal): Promise<LiveEnd> {
    const inboxes = view.inboxIds === null ? "*" : [...view.inboxIds].sort().join(",");
    const key = `${view.accountId}\n${[...view.types].sort().join(",")}\n${inboxes}`;
    let group = this.#groups.get(key);
    const at = BigInt(cursor);
    if (!group || group.stopped) {
      group = new LiveGroup(view, at);
      this.#groups.set(key, group);
      void this.#run(key, group);
    }
    if (at < group.ringFrom) return Promise.resolve({ how: "gap", cursor });
    const joined = group;
    return new Promise<LiveEnd>((resolve) => {
      const member: Member = {
        cursor: at,
        out,
        end: (how, error) => {
          signal.removeEventListener("abort", onAbort);
          resolve({ how, cursor: String(member.cursor), ...(error !== undefined ? { error } : {}) });
        },
      };
      const onAbort = () => {
        if (!joined.members.delete(member)) return;
        member.end("aborted");
        if (joined.members.size === 0) joined.idle.abort();
      };
      if (signal.aborted) return resolve({ how: "aborted", cursor });
      signal.addEventListener("abort", onAbort, { once: true });
      // What the group delivered since the stream's own last read, from the ring, at once.
      if (!offerAll(member, joined.ring)) return member.end("behind");
      joined.members.add(member);
    });
  }

  /** The group's loop: armed before each read, so no commit between a read and the wait is missed. */
  async #run(key: string, group: LiveGroup): Promise<void> {
    const stop = (how: LiveEnd["how"], error?: unknown) => {
      group.stopped = true;
      if (this.#groups.get(key) === group) this.#groups.delete(key);
      for (const member of group.members) member.end(how, error);
      group.members.clear();
    };
    // The loop starts with its first member added (follow() adds it in the same turn).
    await Promise.resolve();
    while (group.members.size > 0) {
      const armed = this.deps.waiters.arm(group.view.accountId);
      try {
        const { rows, more } = await repo.readEvents(
          this.deps.sql,
          group.view,
          String(group.cursor),
          STREAM_READ_BATCH,
          STREAM_READ_BYTES,
        );
        if (rows.length > 0) group.deliver(rows);
        if (more) continue;
        if (group.members.size === 0) break;
        group.idle = new AbortController();
        const end = await armed.wait(this.deps.keepAliveMs, group.idle.signal);
        if (end === "closed") return stop("closed");
        if (end === "timeout") { for (const member of group.members) member.out.ping(); }
      } catch (error) {
        // The members catch up on their own (and meet the error themselves if it lasts).
        return stop("failed", error);
      } finally {
        armed.disarm();
      }
    }
    stop("aborted");
  }
}
