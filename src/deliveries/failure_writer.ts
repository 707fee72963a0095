/**
 * Group commit of failed attempts, as `success_writer.ts` does for successes:
 * while one write is on its way to the database, the failures that finish
 * meanwhile wait and all go in the next call (`repo.recordFailures`). A
 * receiver that times out fails all its in-flight attempts within moments of
 * each other; they cost one round trip, not one each.
 *
 * A failed write rejects every caller of its batch; each then tries again
 * through `recordWithRetry`, as a single write would.
 */
import { Batcher } from "../shared/batcher.ts";
import type { FailureRecorded, FailureToRecord } from "./repo.ts";

/** Writes a batch; resolves to what it did with each, by attempt id. */
export type WriteFailures = (failures: FailureToRecord[]) => Promise<Map<string, FailureRecorded>>;

export class FailureWriter {
  readonly #batches: Batcher<FailureToRecord, FailureRecorded>;

  constructor(write: WriteFailures, maxBatch = 256) {
    this.#batches = new Batcher(async (failures) => {
      const recorded = await write(failures);
      return failures.map((f) => recorded.get(f.result.id) ?? "lost");
    }, { maxItems: maxBatch });
  }

  /** Records one failure; resolves to what recording it did. */
  record(failure: FailureToRecord): Promise<FailureRecorded> {
    return this.#batches.submit(failure);
  }
}
