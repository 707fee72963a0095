/**
 * Group commit of successful attempts (shared/batcher.ts): while one
 * write is on its way to the database, the successes that finish meanwhile
 * wait and all go in the next write, one statement for the lot
 * (`repo.recordSuccesses`). With nothing in progress a success is written at
 * once, so a quiet service adds no latency; a busy one makes one round trip
 * per batch instead of one per delivery.
 *
 * A failed write rejects every caller of its batch; each then tries again
 * through `recordWithRetry`, as a single write would.
 */
import { Batcher } from "../shared/batcher.ts";
import type { AttemptResult } from "./repo.ts";

/** Writes a batch; resolves to the ids it recorded. */
export type WriteSuccesses = (results: AttemptResult[]) => Promise<Set<string>>;

export class SuccessWriter {
  readonly #batches: Batcher<AttemptResult, boolean>;

  constructor(write: WriteSuccesses, maxBatch = 256) {
    this.#batches = new Batcher(async (results) => {
      const recorded = await write(results);
      return results.map((r) => recorded.has(r.id));
    }, { maxItems: maxBatch });
  }

  /** Records one success; resolves to false when the attempt was no longer this worker's. */
  record(result: AttemptResult): Promise<boolean> {
    return this.#batches.submit(result);
  }
}
