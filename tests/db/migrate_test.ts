/** Migrations: applied once, in order, and safe when instances start together. */
import assert from "node:assert/strict";
import postgres from "postgres";
import { openDatabase } from "../../src/db/client.ts";
import { loadMigrations, migrate } from "../../src/db/migrate.ts";
import { TEST_DATABASE_URL } from "../_helpers/db.ts";

Deno.test("two instances migrating one empty schema at once apply each migration exactly once", async () => {
  const schema = `t_mig_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const admin = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE SCHEMA ${schema}`);
  const a = await openDatabase({ databaseUrl: TEST_DATABASE_URL, dataDir: "", schema, poolSize: 2 });
  const b = await openDatabase({ databaseUrl: TEST_DATABASE_URL, dataDir: "", schema, poolSize: 2 });
  try {
    const all = (await loadMigrations()).map((m) => m.version);
    assert.ok(all.length >= 1);
    const [ra, rb] = await Promise.all([migrate(a.sql), migrate(b.sql)]);
    assert.deepEqual([...ra, ...rb].sort((x, y) => x - y), all, "every migration applied once in total");
    assert.ok(ra.length === 0 || rb.length === 0, "one instance did all the work, the other waited");
    assert.deepEqual(await migrate(a.sql), [], "a restart applies nothing");
    const rows = await a.sql<{ version: number }[]>`SELECT version FROM schema_migrations ORDER BY version`;
    assert.deepEqual(rows.map((r) => r.version), all);
  } finally {
    await a.close();
    await b.close();
    await admin.unsafe(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  }
});

Deno.test("a failing migration leaves nothing half-applied", async () => {
  const schema = `t_mig_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const admin = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE SCHEMA ${schema}`);
  const db = await openDatabase({ databaseUrl: TEST_DATABASE_URL, dataDir: "", schema, poolSize: 1 });
  try {
    await assert.rejects(
      migrate(db.sql, [
        { version: 1, name: "ok", sql: "CREATE TABLE a (x int)" },
        { version: 2, name: "broken", sql: "CREATE TABLE b (x nosuchtype)" },
      ]),
    );
    const tables = await db.sql`
      SELECT table_name FROM information_schema.tables WHERE table_schema = ${schema}`;
    assert.deepEqual(tables.map((t) => t.tableName), [], "the transaction rolled back everything");
  } finally {
    await db.close();
    await admin.unsafe(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  }
});
