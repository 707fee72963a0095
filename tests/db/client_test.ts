import assert from "node:assert/strict";
import { reconnectDelaySeconds } from "../../src/db/client.ts";

Deno.test("reconnecting starts at 50 ms and never waits more than 250 ms, however long the outage", () => {
  assert.equal(reconnectDelaySeconds(0), 0.05);
  assert.equal(reconnectDelaySeconds(1), 0.1);
  assert.equal(reconnectDelaySeconds(2), 0.2);
  for (const retries of [3, 5, 10, 100, 10_000]) assert.equal(reconnectDelaySeconds(retries), 0.25);
});
