import assert from "node:assert/strict";
import postgres from "postgres";
import { reconnectDelaySeconds } from "../../src/db/client.ts";
import { TEST_DATABASE_URL } from "../_helpers/db.ts";

Deno.test("reconnecting starts at 50 ms and never waits more than 250 ms, however long the outage", () => {
  assert.equal(reconnectDelaySeconds(0), 0.05);
  assert.equal(reconnectDelaySeconds(1), 0.1);
  assert.equal(reconnectDelaySeconds(2), 0.2);
  for (const retries of [3, 5, 10, 100, 10_000]) assert.equal(reconnectDelaySeconds(retries), 0.25);
});

Deno.test("vendored postgres.js: sql.begin() reserves its connection even when BEGIN fills the pipeline", async () => {
  // Upstream 3.4.9 skipped the reservation when BEGIN was the query that filled a connection's
  // pipeline; max_pipeline 0 makes every BEGIN do so (porsager/postgres#1210): UNSAFE_TRANSACTION.
  // max_pipeline is a driver option its type declarations leave out.
  const options = { max: 4, max_pipeline: 0, onnotice: () => {} };
  const sql = postgres(TEST_DATABASE_URL, options);
  try {
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => sql.begin(async (tx) => (await tx`SELECT ${i}::int AS n`)[0]!.n)),
    );
    assert.deepEqual(results, [0, 1, 2, 3, 4, 5, 6, 7]);
  } finally {
    await sql.end();
  }
});
