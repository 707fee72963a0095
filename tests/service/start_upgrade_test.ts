/**
 * An upgrade as a real start meets it: a database that an earlier release
 * migrated (no migration checksums yet, older stored functions) starts, and
 * afterwards holds this release's functions and the checksum of every file.
 */
import assert from "node:assert/strict";
import { createTestDb } from "../_helpers/db.ts";
import { serviceEnv, startService } from "../_helpers/process.ts";
import { functionBodiesIn, liveFunctionBodies, staleFunctionsSql } from "../_helpers/live_sql.ts";
import { loadMigrations } from "../../src/db/migrate.ts";

Deno.test("a database from before checksums, with older stored functions, starts with this release's functions and checksums", async () => {
  const db = await createTestDb();
  try {
    // As every database an earlier release migrated: no checksum column, and the functions of that release.
    await db.sql`ALTER TABLE schema_migrations DROP COLUMN checksum`;
    await db.sql.unsafe(await staleFunctionsSql());
    const current = await liveFunctionBodies();
    const stale = await functionBodiesIn(db.sql, db.schema);
    for (const [name, body] of current) assert.notEqual(stale.get(name), body, `${name} is an older one`);

    const service = await startService(serviceEnv(db));
    const ready = await fetch(`${service.url}/readyz`);
    assert.equal(ready.status, 200);
    await ready.body?.cancel();
    assert.equal(await service.stop(), 0);

    const after = await functionBodiesIn(db.sql, db.schema);
    for (const [name, body] of current) assert.equal(after.get(name), body, `${name} is this release's`);
    const rows = await db.sql<{ version: number; checksum: string | null }[]>`
      SELECT version, checksum FROM schema_migrations ORDER BY version`;
    const files = await loadMigrations();
    assert.deepEqual([...rows], files.map((m) => ({ version: m.version, checksum: m.checksum })));
  } finally {
    await db.close();
  }
});
