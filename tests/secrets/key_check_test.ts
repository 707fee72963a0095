/**
 * The key check value on PostgreSQL, through the service process: the first
 * start stores it, a start with another ENCRYPTION_KEY is refused with one
 * line (exit code 2), the right key starts. A database written before the
 * check existed (webhook secrets, no check value) is checked on a secret.
 * The embedded mode's case is in tests/service/start_embedded_test.ts.
 */
import assert from "node:assert/strict";
import { createTestDb, type TestDb } from "../_helpers/db.ts";
import { createWebhook, newUser, startApp, TEST_ENCRYPTION_KEY } from "../_helpers/app.ts";
import { runServiceToExit, serviceEnv, startService } from "../_helpers/process.ts";

const OTHER_KEY = "ZHVfmSdHTqN3ZUeUpPkqwKkL2yGZ1R4Uo8Ig0xg0G6w=";
const REFUSAL =
  "ENCRYPTION_KEY cannot decrypt the webhook secrets stored in this database: start with the key they were encrypted with";

async function checkValues(db: TestDb): Promise<string[]> {
  return (await db.sql<{ sealed: string }[]>`SELECT sealed FROM encryption_key_check`).map((r) => r.sealed);
}

async function refusedWith(env: Record<string, string>): Promise<string> {
  const out = await runServiceToExit(env);
  assert.equal(out.code, 2, out.stderr);
  assert.doesNotMatch(out.stderr + out.stdout, /^\s*at /m, "no stack trace");
  return out.stderr.trim();
}

Deno.test("the first start stores a key check value; another ENCRYPTION_KEY is then refused, the right one starts", async () => {
  const db = await createTestDb();
  try {
    assert.deepEqual(await checkValues(db), [], "a new database has none");
    const first = await startService(serviceEnv(db));
    assert.equal(await first.stop(), 0);
    const [sealed, ...more] = await checkValues(db);
    assert.equal(more.length, 0);
    // The key sealed a fixed text: the value is a ciphertext, not the key or a hash of it alone.
    assert.match(sealed!, /^v1\.[A-Za-z0-9+/]+=*$/);
    assert.ok(!sealed!.includes(TEST_ENCRYPTION_KEY));

    assert.equal(await refusedWith(serviceEnv(db, { ENCRYPTION_KEY: OTHER_KEY })), REFUSAL);
    assert.deepEqual(await checkValues(db), [sealed], "a refused start changes nothing");

    const again = await startService(serviceEnv(db));
    assert.equal(await again.stop(), 0);
    assert.deepEqual(await checkValues(db), [sealed], "the value is written once");
  } finally {
    await db.close();
  }
});

Deno.test("a database with webhook secrets but no check value yet (an upgrade) is checked on a stored secret", async () => {
  const db = await createTestDb();
  try {
    // Written as a release before the check would have: through the API, no start-up check.
    const app = await startApp(db.sql);
    try {
      const user = await newUser(app, "pro");
      await createWebhook(app, user, "https://hooks.example.com/inbox", ["inbox.created"], "s".repeat(32));
    } finally {
      await app.close();
    }
    assert.deepEqual(await checkValues(db), []);

    assert.equal(await refusedWith(serviceEnv(db, { ENCRYPTION_KEY: OTHER_KEY })), REFUSAL);
    assert.deepEqual(await checkValues(db), [], "no check value is stored for a key that cannot open the secrets");

    const service = await startService(serviceEnv(db));
    assert.equal(await service.stop(), 0);
    assert.equal((await checkValues(db)).length, 1, "the right key stores the check value");
    assert.equal(await refusedWith(serviceEnv(db, { ENCRYPTION_KEY: OTHER_KEY })), REFUSAL);
  } finally {
    await db.close();
  }
});
