/** The embedded database: the same SQL through postgres.js, data kept in DATA_DIR. */
import assert from "node:assert/strict";
import { openDatabase } from "../../src/db/client.ts";
import { migrate } from "../../src/db/migrate.ts";
import { createAccount } from "../../src/accounts/service.ts";
import { findAccountByEmail } from "../../src/accounts/repo.ts";
import { systemClock } from "../../src/shared/clock.ts";
import { functionBodiesIn, liveFunctionBodies, staleFunctionsSql } from "../_helpers/live_sql.ts";
import { createWebhook, newUser, startApp } from "../_helpers/app.ts";
import { startReceiver } from "../_helpers/receiver.ts";
import { staticResolver } from "../_helpers/resolver.ts";
import { waitUntil } from "../_helpers/wait.ts";
import { createInbox } from "../inboxes/_support.ts";

Deno.test("embedded PGlite: migrations run, data survives a reopen, a second process is refused", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "inbox-pglite-" });
  try {
    const first = await openDatabase({ databaseUrl: undefined, dataDir });
    assert.equal(first.kind, "pglite");
    assert.ok((await migrate(first.sql)).length >= 1);
    await createAccount(first.sql, systemClock, { email: "kept@example.com", password: "password123", plan: "pro" });

    // The data directory is locked while open: a second opener gets a clear error.
    await assert.rejects(
      openDatabase({ databaseUrl: undefined, dataDir }),
      /DATA_DIR: another process is using the embedded database in /,
    );
    await first.close();

    const second = await openDatabase({ databaseUrl: undefined, dataDir });
    try {
      assert.deepEqual(await migrate(second.sql), [], "already migrated");
      // The live SQL is applied at every start here too: older functions are replaced.
      await second.sql.unsafe(await staleFunctionsSql());
      await migrate(second.sql);
      const bodies = await functionBodiesIn(second.sql, "public");
      for (const [name, body] of await liveFunctionBodies()) assert.equal(bodies.get(name), body, name);
      const found = await findAccountByEmail(second.sql, "KEPT@example.com");
      assert.equal(found?.plan, "pro");
      // Transactions behave as on PostgreSQL.
      await assert.rejects(second.sql.begin(async (tx) => {
        await tx`UPDATE accounts SET plan = 'business'`;
        throw new Error("roll back");
      }));
      assert.equal((await findAccountByEmail(second.sql, "kept@example.com"))?.plan, "pro");
    } finally {
      await second.close();
    }
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("embedded PGlite: a webhook delivery goes out and is recorded, through the same claim as on PostgreSQL", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "inbox-pglite-" });
  const receiver = await startReceiver();
  const database = await openDatabase({ databaseUrl: undefined, dataDir });
  try {
    await migrate(database.sql);
    const app = await startApp(database.sql, {
      startDeliveries: true,
      env: { WEBHOOK_TRUSTED_HOSTS: "localhost" },
      resolver: staticResolver({ localhost: ["127.0.0.1"] }),
    });
    try {
      const user = await newUser(app, "pro");
      const webhookId = await createWebhook(app, user, receiver.url("/embedded"));
      for (let i = 0; i < 3; i++) await createInbox(app, user);
      const requests = await receiver.waitFor(3, 10_000);
      assert.deepEqual(requests.map((r) => r.path), ["/embedded", "/embedded", "/embedded"]);
      await waitUntil(
        async () =>
          (await database.sql<{ n: number }[]>`
          SELECT count(*)::int AS n FROM deliveries WHERE webhook_id = ${webhookId} AND status = 'succeeded'`)[0]!
            .n === 3,
        10_000,
        () => "the three results not recorded",
      );
      const [owner] = await database.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM delivery_owners`;
      assert.equal(owner!.n, 1, "the claim took the account");
    } finally {
      await app.close();
    }
  } finally {
    await database.close();
    await receiver.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});
