/**
 * The vendored postgres.js pool queue (vendor/postgres/src/queue.js, patched:
 * `remove` searches from the first live item and consumed slots are compacted
 * away): it behaves as a plain FIFO list with removal, under long runs of
 * pushes, shifts and removals that never empty it (a busy pool's queues), and
 * its removal stays as cheap after 10^6 queries as after 10.
 */
import assert from "node:assert/strict";
// @ts-types="../../vendor/postgres/types/index.d.ts"
import Queue from "../../vendor/postgres/src/queue.js";

interface Q<T> {
  readonly length: number;
  push(x: T): T;
  shift(): T | undefined;
  remove(x: T): T | null;
}

const queue = <T>(): Q<T> => (Queue as unknown as () => Q<T>)();

Deno.test("the pool queue is a FIFO list with removal through long runs that never drain it", () => {
  const q = queue<{ n: number }>();
  const model: { n: number }[] = [];
  // A fixed pseudo-random walk (xorshift): about 10 items live, 200,000 operations.
  let seed = 0x2545f491;
  const next = () => ((seed ^= seed << 13), (seed ^= seed >>> 17), (seed ^= seed << 5), (seed >>> 0) / 2 ** 32);
  let n = 0;
  for (let i = 0; i < 200_000; i++) {
    const r = next();
    if (model.length < 5 || r < 0.4) {
      const x = { n: n++ };
      q.push(x);
      model.push(x);
    } else if (r < 0.75) {
      assert.equal(q.shift(), model.shift());
    } else {
      // A live item (a busy connection moving on), or one already gone (remove answers null).
      const x = next() < 0.8 ? model[Math.floor(next() * model.length)]! : { n: -1 };
      const at = model.indexOf(x);
      if (at !== -1) model.splice(at, 1);
      assert.equal(q.remove(x), at === -1 ? null : x);
    }
    assert.equal(q.length, model.length);
  }
  while (model.length > 0) assert.equal(q.shift(), model.shift());
  assert.equal(q.length, 0);
});

Deno.test("removal does not slow down with the number of items the queue has passed", () => {
  const q = queue<object>();
  const live = Array.from({ length: 10 }, () => q.push({}));
  // A rotation: shift the oldest, push it back, as a busy pool's queue does per query.
  const rotate = (times: number) => {
    for (let i = 0; i < times; i++) q.push(q.shift()!);
  };
  const timeRemovals = () => {
    const t0 = performance.now();
    for (let i = 0; i < 2_000; i++) {
      const x = q.shift()!;
      q.remove(x); // already gone: upstream scanned every slot passed so far
      q.push(x);
    }
    return performance.now() - t0;
  };
  rotate(1_000);
  const early = timeRemovals();
  rotate(1_000_000);
  const late = timeRemovals();
  assert.equal(q.length, live.length);
  // Upstream's queue.js: 0.6 ms, then 178.5 ms (each miss scans the 10^6 slots passed); patched: about the same.
  assert.ok(late < Math.max(20, early * 10), `2,000 removals took ${early.toFixed(1)} ms, then ${late.toFixed(1)} ms`);
});
