/**
 * A long wait in the service's own process (Deno.serve, not `app.fetch`):
 * the request's signal aborts when its client goes away and only then, so a
 * wait that is answered leaves no warning on stderr and one whose client
 * leaves frees its waiter (`"unstable": ["no-legacy-abort"]` in deno.json).
 */
import assert from "node:assert/strict";
import { createTestDb } from "../_helpers/db.ts";
import { serviceEnv, startService } from "../_helpers/process.ts";
import { apiAt, newUser } from "../_helpers/app.ts";
import { waitUntil } from "../_helpers/wait.ts";
import { createInbox } from "../inboxes/_support.ts";
import { waitersGauge, waitRequest } from "../messages/_support.ts";

Deno.test("in the service's process, an answered wait leaves stderr clean and a wait whose client leaves frees its waiter", async () => {
  const db = await createTestDb();
  const service = await startService(serviceEnv(db));
  let code: number;
  try {
    const api = apiAt(service.url);
    const user = await newUser(api, "free");
    const inbox = await createInbox(api, user);
    for (let i = 0; i < 3; i++) {
      const res = await waitRequest(api, user, inbox.id, { timeoutMs: "100" });
      assert.equal(res.status, 204);
      await res.body?.cancel();
    }
    const leaving = new AbortController();
    const left = waitRequest(api, user, inbox.id, { timeoutMs: "50000" }, leaving.signal).catch(() => "aborted");
    await waitUntil(async () => await waitersGauge(api) === 1, 5_000, async () => `${await waitersGauge(api)} waiting`);
    leaving.abort();
    assert.equal(await left, "aborted");
    await waitUntil(async () => await waitersGauge(api) === 0, 5_000, async () => `${await waitersGauge(api)} left`);
  } finally {
    // Stopped either way; its exit code is asserted below, so a failure above is the one reported.
    code = await service.stop();
    await db.close();
  }
  assert.equal(code, 0);
  const stderr = await service.stderr();
  assert.doesNotMatch(stderr, /request\.signal|legacy/, stderr);
});
