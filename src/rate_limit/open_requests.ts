/**
 * Bounds on the long requests an account holds open (event streams, message
 * waits) over every instance on the database: each open request is a row of
 * `open_requests`, opened by one stored function that counts the account's
 * rows under its lock (sql/open_requests.sql), deleted when the request
 * ends, and kept alive by its instance's heartbeat. An instance that dies
 * leaves rows whose lease passes within `leaseMs`; they no longer count.
 */
import { getLogger } from "@logtape/logtape";
import type { Sql } from "../db/client.ts";
import { ApiError } from "../errors.ts";
import { newId } from "../shared/ids.ts";
import * as repo from "./repo.ts";

const log = getLogger(["inbox", "rate_limit"]);

/** What is bounded: its name in the table and in messages, and the wait a refused client is asked for. */
export interface OpenRequestKind {
  /** Stored in `open_requests.kind`. */
  kind: string;
  /** How the refusal names the requests, e.g. "event streams". */
  noun: string;
  /** The setting that sets the bound, named in the refusal. */
  setting: string;
  retryAfterSeconds: number;
}

/** Open event streams (GET /api/events/stream). */
export const EVENT_STREAMS: OpenRequestKind = {
  kind: "event_stream",
  noun: "open event streams",
  setting: "EVENT_STREAMS_PER_ACCOUNT",
  // A stream is long: its client is better off waiting for one to close than asking again at once.
  retryAfterSeconds: 5,
};

/** Pending waits (GET .../messages/wait). */
export const MESSAGE_WAITS: OpenRequestKind = {
  kind: "message_wait",
  noun: "pending message waits",
  setting: "MESSAGE_WAITS_PER_ACCOUNT",
  retryAfterSeconds: 1,
};

/** Ends an open request's count; safe to call more than once. */
export type Close = () => void;

/** The open requests of this instance. */
export interface OpenRequests {
  /**
   * Counts one more request of `kind` for the account, or refuses it with
   * `429 RATE_LIMITED` and `Retry-After` when `limit` are open over all
   * instances. The returned function ends the count.
   */
  open(accountId: string, kind: OpenRequestKind, limit: number): Promise<Close>;
  /** Requests this instance holds open now. */
  readonly size: number;
  /** Starts the heartbeat that keeps this instance's rows alive. */
  start(): void;
  /** Stops the heartbeat and closes every request still counted (shutting down). */
  stop(): Promise<void>;
}

/** Builds the bounds of one instance on `sql`. */
export function createOpenRequests(
  deps: { sql: Sql },
  opts: { leaseMs?: number; heartbeatMs?: number } = {},
): OpenRequests {
  // A dead instance's rows count for at most a lease; a live one renews three times per lease.
  const leaseMs = opts.leaseMs ?? 30_000;
  const heartbeatMs = opts.heartbeatMs ?? leaseMs / 3;
  const held = new Set<string>();
  let timer: ReturnType<typeof setInterval> | undefined;

  const close = (id: string) => {
    if (!held.delete(id)) return;
    // A row that could not be deleted (the database did not answer) stops counting when its lease passes.
    repo.closeRequests(deps.sql, [id]).catch((err) =>
      log.debug("Could not close an open request: {error}", { error: String(err) })
    );
  };

  return {
    async open(accountId, kind, limit) {
      const id = newId("req");
      if (!await repo.openRequest(deps.sql, { id, accountId, kind: kind.kind, limit, leaseMs })) {
        throw new ApiError(
          429,
          "RATE_LIMITED",
          `Too many ${kind.noun}: at most ${limit} per account (${kind.setting}); close one or retry later`,
          undefined,
          { "Retry-After": String(kind.retryAfterSeconds) },
        );
      }
      held.add(id);
      return () => close(id);
    },
    get size() {
      return held.size;
    },
    start() {
      if (timer !== undefined) return;
      timer = setInterval(() => {
        if (held.size === 0) return;
        repo.renewRequests(deps.sql, [...held], leaseMs).catch((err) =>
          log.debug("Could not renew open requests: {error}", { error: String(err) })
        );
      }, heartbeatMs);
      // The heartbeat alone does not keep a process (a test, a CLI) running.
      Deno.unrefTimer(timer);
    },
    async stop() {
      clearInterval(timer);
      timer = undefined;
      const ids = [...held];
      held.clear();
      if (ids.length > 0) await repo.closeRequests(deps.sql, ids).catch(() => {});
    },
  };
}
