/** The batcher: what is submitted while batches run waits and goes together in the next one. */
import assert from "node:assert/strict";
import { Batcher } from "../../src/shared/batcher.ts";

/** A batch runner whose batches finish when the test says so. */
function gatedRunner() {
  const batches: number[][] = [];
  const gates: Array<() => void> = [];
  const run = (items: number[]) => {
    batches.push(items);
    return new Promise<number[]>((resolve) => gates.push(() => resolve(items.map((x) => x * 10))));
  };
  const release = async () => {
    while (gates.length === 0) await Promise.resolve();
    gates.shift()!();
    await new Promise((done) => setTimeout(done, 0));
  };
  return { batches, run, release };
}

Deno.test("an item submitted with nothing running goes at once, alone; what arrives meanwhile goes in the next batch", async () => {
  const g = gatedRunner();
  const batcher = new Batcher(g.run, { maxItems: 100 });
  const outputs = [1, 2, 3, 4].map((x) => batcher.submit(x));
  assert.deepEqual(g.batches, [[1]]);
  await g.release();
  assert.deepEqual(g.batches, [[1], [2, 3, 4]]);
  await g.release();
  assert.deepEqual(await Promise.all(outputs), [10, 20, 30, 40]);
});

Deno.test("concurrency: that many batches run at once, each taking what waits when it starts", async () => {
  const g = gatedRunner();
  const batcher = new Batcher(g.run, { maxItems: 100, concurrency: 2 });
  const outputs = [1, 2, 3, 4, 5].map((x) => batcher.submit(x));
  assert.deepEqual(g.batches, [[1], [2]]);
  await g.release();
  assert.deepEqual(g.batches, [[1], [2], [3, 4, 5]]);
  await g.release();
  await g.release();
  assert.deepEqual(await Promise.all(outputs), [10, 20, 30, 40, 50]);
});

Deno.test("a batch holds at most maxItems, and at most maxWeight past its first item", async () => {
  const g = gatedRunner();
  const batcher = new Batcher(g.run, { maxItems: 3, maxWeight: 10, weight: (x) => x });
  const outputs = [1, 1, 1, 1, 1, 20, 2, 9].map((x) => batcher.submit(x));
  while (g.batches.length < 6) await g.release();
  await g.release();
  // Three at most; the heavy one goes alone (a first item always goes); 2 + 9 would weigh 11.
  assert.deepEqual(g.batches, [[1], [1, 1, 1], [1], [20], [2], [9]]);
  assert.deepEqual(await Promise.all(outputs), [10, 10, 10, 10, 10, 200, 20, 90]);
});

Deno.test("a failed batch rejects each of its items, and the next batch runs", async () => {
  let calls = 0;
  const batcher = new Batcher<number, number>((items) => {
    calls++;
    return calls === 2 ? Promise.reject(new Error("boom")) : Promise.resolve(items);
  }, { maxItems: 10 });
  const first = batcher.submit(1);
  const failed = [batcher.submit(2), batcher.submit(3)];
  assert.equal(await first, 1);
  for (const f of failed) await assert.rejects(f, /boom/);
  assert.equal(await batcher.submit(4), 4);
});
