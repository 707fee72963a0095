/**
 * The embedded server's memory settings are in effect, read through the
 * service's own client (openDatabase with no DATABASE_URL), also where the
 * data directory's postgresql.conf says otherwise.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { EMBEDDED_SHARED_BUFFERS, openDatabase } from "../../src/db/client.ts";

Deno.test("embedded: the server runs with EMBEDDED_SHARED_BUFFERS over postgresql.conf's 128MB", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "inbox-settings-" });
  try {
    const db = await openDatabase({ databaseUrl: undefined, dataDir });
    try {
      assert.equal(EMBEDDED_SHARED_BUFFERS, "2MB");
      const [row] = await db.sql<{ sharedBuffers: string }[]>`SHOW shared_buffers`;
      assert.equal(row!.sharedBuffers, EMBEDDED_SHARED_BUFFERS);
    } finally {
      await db.close();
    }
    const conf = await Deno.readTextFile(join(dataDir, "pgdata", "postgresql.conf"));
    assert.match(conf, /^shared_buffers = 128MB/m, "the data directory's own setting, which the start overrides");
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});
