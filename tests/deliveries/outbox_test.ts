/**
 * The outbox's transaction on PostgreSQL: its events are written last, and
 * COMMIT follows that statement without waiting for its answer, so a failed
 * append must still leave nothing of the transaction behind and throw its
 * own error, and a committed one must be seen by the queue.
 */
import assert from "node:assert/strict";
import { createWebhook } from "../_helpers/app.ts";
import { deliveryCount, deliveryFixture, emitInboxCreated } from "./_support.ts";

Deno.test("a transaction whose events cannot be appended commits none of its work and throws the append's error", async () => {
  const f = await deliveryFixture();
  try {
    await createWebhook(f.app, f.user, f.receiver.url("/o"));
    // Appends that commit first: the pool's connections then hold the append's statement prepared, and COMMIT
    // goes out right behind it (a statement described first waits for its answer).
    for (let i = 0; i < 5; i++) await emitInboxCreated(f);
    await f.db.sql`DELETE FROM deliveries`;
    const now = f.clock.now();
    const err = await f.app.deps.outbox.transaction(async (tx, emit) => {
      await tx`INSERT INTO accounts (id, email, password_hash, plan, created_at)
        VALUES ('acc_outbox_probe', 'probe@example.com', 'x', 'free', ${now})`;
      // An event of an account that does not exist: its row breaks the events' foreign key.
      await emit("acc_missing", "inbox.created", {
        inboxId: "inb_x",
        address: "x@inbox.localhost",
        expiresAt: now.toISOString(),
      }, now);
      return "returned";
    }).then(() => undefined, (e: unknown) => e as Error);
    assert.ok(err instanceof Error, "the transaction throws");
    assert.match(String(err.message), /foreign key/i, err.message);
    const [row] = await f.db.sql<
      { n: number }[]
    >`SELECT count(*)::int AS n FROM accounts WHERE id = 'acc_outbox_probe'`;
    assert.equal(row!.n, 0, "the work before the events is rolled back with them");
    assert.equal(await deliveryCount(f), 0);

    // The pool's connection is fit for the next transaction, which commits.
    await emitInboxCreated(f);
    assert.equal(await deliveryCount(f), 1);
    assert.equal(await f.app.deps.deliveries.queue.runOnce(), 1, "the committed event's attempt is claimed and sent");
    assert.equal(f.receiver.requests.length, 1);
  } finally {
    await f.close();
  }
});
