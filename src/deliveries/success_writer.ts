/**
 * Group commit of successful attempts. While one write is on its way to the
 * database, the successes that finish meanwhile wait and all go in the next
 * write, one statement for the lot (`repo.recordSuccesses`). With nothing in
 * progress a success is written at once, so a quiet service adds no latency;
 * a busy one makes one round trip per batch instead of one per delivery.
 *
 * A failed write rejects every caller of its batch; each then tries again
 * through `recordWithRetry`, as a single write would.
 */
import type { AttemptResult } from "./repo.ts";

/** Writes a batch; resolves to the ids it recorded. */
export type WriteSuccesses = (results: AttemptResult[]) => Promise<Set<string>>;

interface Waiting {
  result: AttemptResult;
  resolve(recorded: boolean): void;
  reject(err: unknown): void;
}

export class SuccessWriter {
  readonly #write: WriteSuccesses;
  readonly #maxBatch: number;
  #waiting: Waiting[] = [];
  #writing = false;

  constructor(write: WriteSuccesses, maxBatch = 256) {
    this.#write = write;
    this.#maxBatch = maxBatch;
  }

  /** Records one success; resolves to false when the attempt was no longer this worker's. */
  record(result: AttemptResult): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ result, resolve, reject });
      if (!this.#writing) void this.#flush();
    });
  }

  async #flush(): Promise<void> {
    this.#writing = true;
    try {
      while (this.#waiting.length > 0) {
        const batch = this.#waiting.splice(0, this.#maxBatch);
        try {
          const recorded = await this.#write(batch.map((w) => w.result));
          for (const w of batch) w.resolve(recorded.has(w.result.id));
        } catch (err) {
          for (const w of batch) w.reject(err);
        }
      }
    } finally {
      this.#writing = false;
    }
  }
}
