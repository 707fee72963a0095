/**
 * Migrations: applied once, in order, and safe when instances start together;
 * history checked by checksum; live SQL applied at every start.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { createHash } from "node:crypto";
import { openDatabase, type Sql } from "../../src/db/client.ts";
import { loadMigrations, migrate } from "../../src/db/migrate.ts";
import { LIVE_SQL } from "../../src/db/live_sql.ts";
import { ConfigError } from "../../src/shared/config_error.ts";
import { TEST_DATABASE_URL } from "../_helpers/db.ts";
import {
  droppedFunctionNames,
  functionBodiesIn,
  functionSignaturesIn,
  liveFunctionBodies,
  staleFunctionsSql,
} from "../_helpers/live_sql.ts";

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

/** A schema of its own on the test server, dropped by `close`. */
async function freshSchema() {
  const schema = `t_mig_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const admin = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE SCHEMA ${schema}`);
  const db = await openDatabase({ databaseUrl: TEST_DATABASE_URL, dataDir: "", schema, poolSize: 1 });
  return {
    schema,
    sql: db.sql,
    close: async () => {
      await db.close();
      await admin.unsafe(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    },
  };
}

/** The names of the indexes of `deliveries` in `schema`. */
async function deliveryIndexes(sql: Sql, schema: string): Promise<string[]> {
  const rows = await sql<{ indexname: string }[]>`
    SELECT indexname FROM pg_indexes WHERE schemaname = ${schema} AND tablename = 'deliveries'`;
  return rows.map((r) => r.indexname).sort();
}

const FIRST_0012 = new URL("./fixtures/0012_claim_function_first.sql", import.meta.url);

Deno.test("a database that applied the first 0012 before checksums were kept ends with this release's functions, checksums and indexes", async () => {
  const db = await freshSchema();
  try {
    const all = await loadMigrations();
    const m13 = all.find((m) => m.version === 13)!;
    // As the runner of that time left it: migrations 1..11, 0012 as first released (its functions, and the two
    // in-flight indexes it dropped only later), 0013, and no checksum column.
    await migrate(db.sql, all.filter((m) => m.version <= 11), []);
    const first12 = { version: 12, name: "claim_function", sql: await Deno.readTextFile(FIRST_0012) };
    await migrate(db.sql, [...all.filter((m) => m.version <= 11), first12, m13], []);
    await db.sql`ALTER TABLE schema_migrations DROP COLUMN checksum`;
    const current = await liveFunctionBodies();
    const before = await functionBodiesIn(db.sql, db.schema);
    assert.notEqual(before.get("deliveries_claim"), current.get("deliveries_claim"), "the first claim is there");
    assert.ok((await deliveryIndexes(db.sql, db.schema)).includes("deliveries_in_flight_idx"));

    assert.deepEqual(await migrate(db.sql), all.filter((m) => m.version > 13).map((m) => m.version));

    const after = await functionBodiesIn(db.sql, db.schema);
    assert.ok(current.size >= 3);
    for (const [name, body] of current) assert.equal(after.get(name), body, `${name} is this release's`);
    const rows = await db.sql<{ version: number; checksum: string }[]>`
      SELECT version, checksum FROM schema_migrations ORDER BY version`;
    assert.deepEqual([...rows], all.map((m) => ({ version: m.version, checksum: m.checksum })), "checksums adopted");
    const indexes = await deliveryIndexes(db.sql, db.schema);
    assert.ok(!indexes.includes("deliveries_in_flight_idx"), indexes.join());
    assert.ok(!indexes.includes("deliveries_in_flight_webhook_idx"), indexes.join());
    assert.deepEqual(await migrate(db.sql), [], "the next start applies no migration");
  } finally {
    await db.close();
  }
});

Deno.test("every start puts back this release's live functions, whatever replaced them", async () => {
  const db = await freshSchema();
  try {
    await migrate(db.sql);
    await db.sql.unsafe(await staleFunctionsSql());
    const current = await liveFunctionBodies();
    const stale = await functionBodiesIn(db.sql, db.schema);
    for (const [name, body] of current) assert.notEqual(stale.get(name), body, `${name} was replaced`);
    assert.deepEqual(await migrate(db.sql), []);
    const after = await functionBodiesIn(db.sql, db.schema);
    for (const [name, body] of current) assert.equal(after.get(name), body, `${name} is this release's again`);
  } finally {
    await db.close();
  }
});

Deno.test("a database upgraded from the functions the migrations made ends with this release's, and none of theirs", async () => {
  const db = await freshSchema();
  try {
    // As the numbered migrations leave it: the claim's cap of one event named p_per_trigger (0012), failures
    // recorded by deliveries_record_failures (0013), the signatures the releases before this one kept.
    await migrate(db.sql, undefined, []);
    const before = await functionSignaturesIn(db.sql, db.schema);
    assert.ok(before.some((f) => f.startsWith("deliveries_record_failures(")), before.join("\n"));
    assert.ok(before.some((f) => f.startsWith("deliveries_claim(") && f.includes("p_per_trigger ")), before.join("\n"));

    assert.deepEqual(await migrate(db.sql), [], "a start applies no migration, only the live SQL");
    const after = await functionSignaturesIn(db.sql, db.schema);
    const names = after.map((f) => f.slice(0, f.indexOf("(")));
    assert.deepEqual(names, [...(await liveFunctionBodies()).keys()].sort(), "one of each live function, no other");
    assert.ok(after.some((f) => f.startsWith("deliveries_record_results(")), after.join("\n"));
    for (const f of after) assert.doesNotMatch(f, /p_per_trigger/, "the cap of one event is p_per_event");
    const current = await liveFunctionBodies();
    const bodies = await functionBodiesIn(db.sql, db.schema);
    for (const [name, body] of current) assert.equal(bodies.get(name), body, `${name} is this release's`);

    await migrate(db.sql);
    assert.deepEqual(await functionSignaturesIn(db.sql, db.schema), after, "the next start leaves the same functions");
  } finally {
    await db.close();
  }
});

Deno.test("a migration file that differs from the one the database applied is refused with one line naming it, and nothing changes", async () => {
  const db = await freshSchema();
  try {
    const all = await loadMigrations();
    await migrate(db.sql);
    await db.sql.unsafe(await staleFunctionsSql());
    const stale = await functionBodiesIn(db.sql, db.schema);
    const edited = all.map((m) => m.version === 12 ? { ...m, sql: `${m.sql}\n-- edited\n`, checksum: undefined } : m);
    const m12 = all.find((m) => m.version === 12)!;
    const editedChecksum = createHash("sha256").update(edited.find((m) => m.version === 12)!.sql).digest("hex");
    const error = await migrate(db.sql, edited).then(() => undefined, (err: unknown) => err);
    assert.ok(error instanceof ConfigError, String(error));
    assert.equal(
      error.message,
      `Migration src/db/migrations/0012_claim_function.sql differs from the one this database applied (checksum ${
        m12.checksum!.slice(0, 12)
      } applied, ${
        editedChecksum.slice(0, 12)
      } in the file); applied migrations are history: restore the file and add a new migration`,
    );
    assert.deepEqual(await functionBodiesIn(db.sql, db.schema), stale, "refused before the live SQL ran");

    // Another migration under a number the database applied is as much a change.
    const renamed = all.map((m) => m.version === 13 ? { ...m, name: "something_else" } : m);
    await assert.rejects(
      migrate(db.sql, renamed),
      (err: Error) =>
        err instanceof ConfigError &&
        err.message ===
          "Migration src/db/migrations/0013_record_failures.sql differs from the one this database applied (it applied 0013_record_failures.sql); applied migrations are history: restore the file and add a new migration",
    );
    assert.deepEqual(await migrate(db.sql), [], "the files as they are still start");
  } finally {
    await db.close();
  }
});

Deno.test("a database that applied a migration this release does not have is refused with one line", async () => {
  const db = await freshSchema();
  try {
    const all = await loadMigrations();
    await migrate(db.sql);
    await db.sql`INSERT INTO schema_migrations (version, name, checksum) VALUES (9999, 'from_a_newer_release', 'x')`;
    await assert.rejects(
      migrate(db.sql),
      (err: Error) =>
        err instanceof ConfigError &&
        err.message ===
          `This database has applied migration 9999_from_a_newer_release.sql, which this release does not have (its last is ${
            all.at(-1)!.file!.split("/").at(-1)
          }): a newer release migrated it; start that release or a newer one`,
    );
  } finally {
    await db.close();
  }
});

/** Every function a numbered migration creates, and every `CREATE ... FUNCTION` of a live file. */
const CREATE_FUNCTION = /\bCREATE\s+(OR\s+REPLACE\s+)?FUNCTION\s+(\w+)/gi;

Deno.test("every function or trigger a migration made is live SQL or dropped by it, and every live SQL file is listed", async () => {
  const live = new Set<string>();
  const dropped = await droppedFunctionNames();
  for (const url of LIVE_SQL) {
    for (const m of (await Deno.readTextFile(url)).matchAll(CREATE_FUNCTION)) {
      assert.ok(m[1], `${url.pathname}: ${m[2]} is written with CREATE OR REPLACE`);
      live.add(m[2]!);
    }
  }
  for (const m of await loadMigrations()) {
    assert.doesNotMatch(m.sql, /\bCREATE\s+(OR\s+REPLACE\s+)?TRIGGER\b/i, `${m.file}: a trigger belongs in live SQL`);
    for (const f of m.sql.matchAll(CREATE_FUNCTION)) {
      // One that is gone since is dropped by the live SQL, so an upgraded database does not keep it either.
      assert.ok(
        live.has(f[2]!) || dropped.has(f[2]!),
        `${m.file} creates ${f[2]}, which no live SQL file keeps up or drops`,
      );
    }
  }
  // Each owner's src/<owner>/sql/*.sql is applied only if LIVE_SQL lists it.
  const listed = new Set(LIVE_SQL.map((u) => u.href));
  const src = new URL("../../src/", import.meta.url);
  for await (const owner of Deno.readDir(src)) {
    if (!owner.isDirectory) continue;
    const dir = new URL(`${owner.name}/sql/`, src);
    const entries = await Array.fromAsync(Deno.readDir(dir)).catch(() => []);
    for (const entry of entries.filter((e) => e.name.endsWith(".sql"))) {
      assert.ok(listed.has(new URL(entry.name, dir).href), `src/${owner.name}/sql/${entry.name} is not in LIVE_SQL`);
    }
  }
});

/**
 * The checksum of every released migration. A migration is history once a
 * database may have applied it: a change here means a changed file that
 * every such database would refuse. A new migration adds its line.
 */
const RELEASED: Record<string, string> = {
  "src/db/migrations/0001_accounts_and_api_keys.sql":
    "c2ea372373b42286c86858dbd0596844ec4d53696b3ac23372661bfe5db43176",
  "src/db/migrations/0002_webhooks.sql": "12fb8fa59d5db32c9bfc5025ba2d03f91b46858f5e70650981855a47985d8cc6",
  "src/db/migrations/0003_events_and_deliveries.sql":
    "f3d7900d6e4fd9fa886b46c178552e1003989162b451ceb32aa6ad4188f3c3a4",
  "src/db/migrations/0004_inboxes.sql": "ed3d7a96f9c7f55d2befebe7414723d75f4c1f08935f207514aec3a438165c7a",
  "src/db/migrations/0005_in_flight_per_webhook.sql":
    "8dea932bd1e92e3e963c857bdaba08b25104ca7532941523293c0be4eb35c977",
  "src/db/migrations/0006_due_order.sql": "c0d2623307206d96e3274cd444e099fca18582f8834a9f565d371fe9dbb03a75",
  "src/db/migrations/0007_rate_limit_lockouts.sql": "86dc2fc37258d16df141e84ea79d54eae332549fb280b99de52ea938d81f8bf3",
  "src/db/migrations/0008_message_contents.sql": "c10f44db45682c16c7dfd5d0f89bc45d00559e92b0c9b5be043772d9b32084d8",
  "src/db/migrations/0009_event_log.sql": "00a91e539acb57fc57ce194639d39a9b030bef2e59b955285f21a2029e61fae8",
  "src/db/migrations/0010_key_check.sql": "06ecc772f6680afe4eba272d48ff0bb39af4e9477234f3dd87414c7e7ff803c7",
  "src/db/migrations/0011_delivery_log_details.sql": "d463c01628a3cbf4aeb83e6eb593b4393d8861afb6ac9d6398b39b0b34d7fffa",
  "src/db/migrations/0012_claim_function.sql": "39e78367206048f9ac61de69adf6ee5dd67a9a8355efc9b4f9c7aacf0956638b",
  "src/db/migrations/0013_record_failures.sql": "c3b45babe51c007c334de92c89c69dfed2cbd5a29e921a5cd3c3e9bf5bf3c7ff",
  "src/db/migrations/0014_drop_in_flight_indexes.sql":
    "7f20ea4359915e7e8b2323bf70c69d32568e3a78ab5847057f4ac378dcf3f9cc",
  "src/db/migrations/0015_open_requests.sql": "c9644b2efde7de979221905f7c8d2732514e2f51d95482613758f148701e3edd",
  "src/db/migrations/0016_scoped_keys.sql": "bd80b8371e286a848cff567bce1f68ef1d09d6c59024f7135a7834cdd600333c",
  "src/db/migrations/0017_webhook_operations.sql": "11c3fa73e66edf5b38ff2d59cf6d4255a5e928a6ec8662b1b21170e22b5df5e9",
  "src/db/migrations/0018_delivery_owners.sql": "d87497dcfbb4bfd0bf019aebb772b304e3ba6997655663ac47fc3fa5d8ef31b2",
};

Deno.test("released migrations never change (their checksums are pinned)", async () => {
  const files = Object.fromEntries((await loadMigrations()).map((m) => [m.file!, m.checksum!]));
  assert.deepEqual(files, RELEASED);
});
