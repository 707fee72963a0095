/**
 * The tests create their database when the server does not have it yet
 * (README: a fresh PostgreSQL needs no `createdb` before `deno task test`).
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { ensureDatabase, TEST_DATABASE_URL } from "../_helpers/db.ts";

/** TEST_DATABASE_URL with another database name. */
function urlOf(database: string): string {
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${database}`;
  return url.href;
}

async function databaseExists(name: string): Promise<boolean> {
  const sql = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {} });
  try {
    return (await sql`SELECT 1 FROM pg_database WHERE datname = ${name}`).length === 1;
  } finally {
    await sql.end();
  }
}

Deno.test("a missing test database is created, an existing one is left alone, at once from two callers", async () => {
  const name = `inbox_missing_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  assert.equal(await databaseExists(name), false);
  try {
    await Promise.all([ensureDatabase(urlOf(name)), ensureDatabase(urlOf(name))]);
    assert.equal(await databaseExists(name), true);
    const sql = postgres(urlOf(name), { max: 1, onnotice: () => {} });
    try {
      assert.deepEqual([...await sql`SELECT current_database() AS db`], [{ db: name }]);
    } finally {
      await sql.end();
    }
    await ensureDatabase(urlOf(name)); // exists: nothing to do
  } finally {
    const admin = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {} });
    try {
      await admin.unsafe(`DROP DATABASE IF EXISTS "${name}"`);
    } finally {
      await admin.end();
    }
  }
});
