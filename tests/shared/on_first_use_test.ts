import assert from "node:assert/strict";
import { onFirstUse } from "../../src/shared/on_first_use.ts";

Deno.test("onFirstUse loads on the first call, not before, and every caller gets that one promise", async () => {
  let loads = 0;
  const value = onFirstUse(() => Promise.resolve(++loads));
  assert.equal(loads, 0);
  const [a, b] = [value(), value()];
  assert.equal(a, b);
  assert.equal(await value(), 1);
  assert.equal(loads, 1);
});
