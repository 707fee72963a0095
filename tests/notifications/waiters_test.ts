/** Keyed waiters: the stamp of a key's latest wake-up, by which the streams of one account share a read. */
import assert from "node:assert/strict";
import { KeyedWaiters, nextStamp } from "../../src/notifications/waiters.ts";

Deno.test("a waiter armed after a wake-up of its key carries that wake-up's stamp; reads started later are newer", async () => {
  const waiters = new KeyedWaiters();
  const first = waiters.arm("acc_1");
  const before = nextStamp(); // a read that started before the wake-up
  waiters.wake("acc_1");
  assert.equal(await first.wait(1_000), "woken");
  const second = waiters.arm("acc_1"); // re-armed while the first is still armed
  first.disarm();
  assert.ok(second.lastWake > before, "a read started before the wake-up is not good enough");
  const after = nextStamp(); // a read that started after it
  assert.ok(after > second.lastWake, "a read started after the wake-up may be shared");
  // Another key's wake-up does not move this key's stamp.
  waiters.wake("acc_2");
  assert.equal(waiters.arm("acc_1").lastWake, second.lastWake);
  // After the hub reconnects (notifications may be lost), every key counts as woken.
  waiters.wakeAll();
  assert.ok(waiters.arm("acc_1").lastWake > after);
  second.disarm();
});
