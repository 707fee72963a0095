/** The embedded database's VACUUM sweep: PGlite runs no autovacuum. */
import assert from "node:assert/strict";
import { openDatabase } from "../../src/db/client.ts";
import { vacuumDeadRows } from "../../src/db/vacuum_sweep.ts";
import { ADMIN_TOKEN, apiAt, newApiKey, newOperatorAccount } from "../_helpers/app.ts";
import { startService } from "../_helpers/process.ts";
import { waitUntil } from "../_helpers/wait.ts";

Deno.test("embedded PGlite: the dead-rows sweep vacuums the tables past autovacuum's threshold, and their space is used again", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "inbox-pglite-" });
  const db = await openDatabase({ databaseUrl: undefined, dataDir });
  try {
    const sql = db.sql;
    for (const t of ["churned", "calm"]) {
      await sql`CREATE TABLE ${sql(t)} (id int PRIMARY KEY, state text NOT NULL)`;
      await sql`CREATE INDEX ${sql(`${t}_open`)} ON ${sql(t)} (id) WHERE state = 'open'`;
      await sql`INSERT INTO ${sql(t)} SELECT g, 'open' FROM generate_series(1, 1000) g`;
    }
    // 1,000 dead versions against a threshold of 50 + 0.2 x 1,000 = 250; 200 stay under it.
    await sql`UPDATE churned SET state = 'closed'`;
    await sql`UPDATE calm SET state = 'closed' WHERE id <= 200`;
    const dead = async () =>
      Object.fromEntries(
        (await sql<{ table: string; dead: number }[]>`
          SELECT relname AS table, n_dead_tup::int AS dead FROM pg_stat_user_tables
          WHERE relname IN ('churned', 'calm')`).map((r) => [r.table, r.dead]),
      );
    // The backend reports its counts at most once a second, on a later statement.
    const expect = JSON.stringify({ churned: 1000, calm: 200 });
    await waitUntil(
      async () => JSON.stringify(await dead()) === expect,
      10_000,
      async () => `dead rows ${JSON.stringify(await dead())}, not ${expect}`,
    );
    const size = async () => Number((await sql`SELECT pg_relation_size('churned') AS n`)[0]!.n);

    assert.equal(await vacuumDeadRows({ sql }, new Date()), 1000);
    await waitUntil(
      async () => (await dead()).churned === 0,
      10_000,
      async () => `dead rows after the sweep ${JSON.stringify(await dead())}`,
    );
    assert.equal((await dead()).calm, 200);
    assert.equal(await vacuumDeadRows({ sql }, new Date()), 0, "nothing past the threshold: nothing vacuumed");

    // The space the VACUUM freed takes the next versions: the table does not grow.
    const before = await size();
    await sql`UPDATE churned SET state = 'open'`;
    assert.equal(await size(), before);
  } finally {
    await db.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("the service on the embedded database runs the dead-rows sweep at the minute", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "inbox-pglite-" });
  try {
    const service = await startService(
      { DATA_DIR: dataDir, ADMIN_TOKEN, LOG_LEVEL: "info", LOG_FORMAT: "json" },
      { stdout: true },
    );
    try {
      // 60 inboxes created and deleted: 60 dead rows in a table with none live, over the threshold of 50.
      const app = apiAt(service.url);
      const { key } = await newApiKey(app, await newOperatorAccount(app));
      for (let i = 0; i < 60; i++) {
        const created = await app.request("/api/inboxes", { method: "POST", json: {}, auth: key });
        assert.equal(created.status, 201, await created.clone().text());
        const { id } = await created.json();
        const deleted = await app.request(`/api/inboxes/${id}`, { method: "DELETE", auth: key });
        await deleted.body?.cancel();
        assert.equal(deleted.status, 200);
      }
      // Deno.cron runs the sweeps at the start of each minute. The deletes' dead rows reach the
      // statistics the sweep reads at most once a second (PostgreSQL's PGSTAT_MIN_INTERVAL): the
      // first minute that starts 2 s after the last delete is the one that must vacuum them,
      // within 45 s of its start (the sweeps run one after another on one connection).
      const minute = Math.ceil((Date.now() + 2_000) / 60_000) * 60_000;
      const sweeps = () =>
        service.stdoutLines.filter((l) => l.startsWith("{"))
          .map((l) => JSON.parse(l).properties ?? {})
          .filter((p): p is { name: string; count: number } => typeof p.count === "number");
      await waitUntil(
        () => sweeps().some((p) => p.name === "dead rows"),
        minute + 45_000 - Date.now(),
        () => `no dead-rows sweep logged; sweeps logged: ${JSON.stringify(sweeps())}`,
      );
      const vacuumed = sweeps().find((p) => p.name === "dead rows")!;
      assert.ok(vacuumed.count > 50, `dead rows vacuumed: ${vacuumed.count}`);
    } catch (err) {
      await service.stop();
      throw err;
    }
    assert.equal(await service.stop(), 0);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});
