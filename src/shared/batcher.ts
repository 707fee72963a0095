/**
 * Batching by waiting: items submitted while earlier batches are on their way
 * to the database wait, and go together in the next batch, one statement or
 * one transaction for the lot (group commit, for writes). With nothing in
 * progress an item goes at once, so a quiet service adds no latency; a busy
 * one pays the round trips (and a commit's flush) once per batch instead of
 * once per item.
 *
 * At most `concurrency` batches are in progress at once; a batch holds at most
 * `maxItems` items and, past its first item, at most `maxWeight` in weight
 * (bytes, say), so one large item still goes alone. A failed batch rejects
 * every caller of its batch.
 */
import { withoutContext } from "./log.ts";

/** Runs a batch; resolves to one output per item, in the items' order. */
export type RunBatch<I, O> = (items: I[]) => Promise<O[]>;

export interface BatcherOptions<I> {
  maxItems: number;
  /** Batches in progress at once (default 1). */
  concurrency?: number;
  /** The most weight one batch carries past its first item (default: no limit). */
  maxWeight?: number;
  weight?: (item: I) => number;
}

interface Waiting<I, O> {
  item: I;
  resolve(output: O): void;
  reject(err: unknown): void;
}

export class Batcher<I, O> {
  readonly #runBatch: RunBatch<I, O>;
  readonly #maxItems: number;
  readonly #concurrency: number;
  readonly #maxWeight: number;
  readonly #weight: (item: I) => number;
  #waiting: Waiting<I, O>[] = [];
  #running = 0;

  constructor(run: RunBatch<I, O>, options: BatcherOptions<I>) {
    this.#runBatch = run;
    this.#maxItems = options.maxItems;
    this.#concurrency = options.concurrency ?? 1;
    this.#maxWeight = options.maxWeight ?? Infinity;
    this.#weight = options.weight ?? (() => 0);
  }

  /** Submits `item` with whatever else is waiting; resolves to its output once its batch has run. */
  submit(item: I): Promise<O> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ item, resolve, reject });
      // The batch runs for every item in it: not in the log context of whichever submitted first.
      if (this.#running < this.#concurrency) void withoutContext(() => this.#drain());
    });
  }

  /** Takes the next batch off the queue: up to maxItems, and maxWeight past the first. */
  #take(): Waiting<I, O>[] {
    let weight = 0;
    let n = 0;
    while (n < this.#waiting.length && n < this.#maxItems) {
      weight += this.#weight(this.#waiting[n]!.item);
      if (n > 0 && weight > this.#maxWeight) break;
      n++;
    }
    return this.#waiting.splice(0, n);
  }

  async #drain(): Promise<void> {
    this.#running++;
    try {
      while (this.#waiting.length > 0) {
        const batch = this.#take();
        try {
          const outputs = await this.#runBatch(batch.map((w) => w.item));
          batch.forEach((w, i) => w.resolve(outputs[i]!));
        } catch (err) {
          for (const w of batch) w.reject(err);
        }
      }
    } finally {
      this.#running--;
    }
  }
}
