/**
 * Group commit of results, successes and failures alike (shared/batcher.ts):
 * while one write is on its way to the database, the results that finish
 * meanwhile wait and all go in the next call (`repo.recordResults`), in the
 * order they finished. With nothing in progress a result is written at once,
 * so a quiet service adds no latency; a busy one makes one round trip per
 * batch instead of one per delivery, and a receiver that times out fails all
 * its in-flight attempts within moments of each other for one round trip.
 *
 * A failed write rejects every caller of its batch; each then tries again
 * through `recordWithRetry`, as a single write would.
 */
import { Batcher } from "../shared/batcher.ts";
import type { Recorded, ResultToRecord } from "./repo.ts";

/** Writes a batch; resolves to what it did with each, by attempt id. */
export type WriteResults = (results: ResultToRecord[]) => Promise<Map<string, Recorded>>;

/** The one writer of delivery results: batches them (at most `maxBatch` a call) and tells each caller its outcome. */
export class ResultWriter {
  readonly #batches: Batcher<ResultToRecord, Recorded>;

  constructor(write: WriteResults, maxBatch = 256) {
    this.#batches = new Batcher(async (results) => {
      const recorded = await write(results);
      return results.map((r) => recorded.get(r.result.id) ?? "lost");
    }, { maxItems: maxBatch });
  }

  /** Records one result; resolves to what recording it did ("lost" when the attempt was no longer this worker's). */
  record(result: ResultToRecord): Promise<Recorded> {
    return this.#batches.submit(result);
  }
}
