/**
 * The embedded database's first start from the shipped data directory
 * (vendor/pglite/pgdata.tar.gz, src/db/pgdata_template.ts), through the
 * service's own client: the template is of the installed PGlite, a new
 * DATA_DIR is made from it (not by initdb), and a start cut short while
 * unpacking leaves nothing the next start trips on.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { openDatabase } from "../../src/db/client.ts";
import { PGLITE_VERSION, templateRefusal } from "../../src/db/pgdata_template.ts";

const DENO_JSON = JSON.parse(await Deno.readTextFile(new URL("../../deno.json", import.meta.url)));

Deno.test("the PGlite data directory template was made by the installed PGlite: run scripts/pgdata_template.ts after an upgrade", async () => {
  assert.equal(`npm:@electric-sql/pglite@${PGLITE_VERSION}`, DENO_JSON.imports["@electric-sql/pglite"]);
  assert.equal(await templateRefusal(), undefined);
});

/** The cluster's system identifier, which initdb draws at random and the template fixes. */
async function systemIdentifier(dataDir: string): Promise<string> {
  const db = await openDatabase({ databaseUrl: undefined, dataDir });
  try {
    const [row] = await db.sql<{ id: string }[]>`SELECT system_identifier::text AS id FROM pg_control_system()`;
    return row!.id;
  } finally {
    await db.close();
  }
}

Deno.test("a first start makes the embedded database from the template, past what a start cut short left", async () => {
  const [a, b] = [
    await Deno.makeTempDir({ prefix: "inbox-template-a-" }),
    await Deno.makeTempDir({ prefix: "inbox-template-b-" }),
  ];
  try {
    // What an earlier start cut short while unpacking leaves beside pgdata.
    await Deno.mkdir(join(b, "pgdata.partial", "base"), { recursive: true });
    await Deno.writeTextFile(join(b, "pgdata.partial", "PG_VERSION"), "junk\n");

    const first = await systemIdentifier(a);
    // initdb would have drawn another identifier for the second directory.
    assert.equal(await systemIdentifier(b), first);
    await assert.rejects(Deno.stat(join(b, "pgdata.partial")), Deno.errors.NotFound);
    assert.equal((await Deno.readTextFile(join(b, "pgdata", "PG_VERSION"))).trim().length > 0, true);
    // A later start opens what the first one made.
    assert.equal(await systemIdentifier(a), first);
  } finally {
    for (const dir of [a, b]) await Deno.remove(dir, { recursive: true });
  }
});
