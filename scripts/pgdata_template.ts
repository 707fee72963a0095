/**
 * Makes vendor/pglite/pgdata.tar.gz: the data directory that PGlite's initdb
 * makes on a first start, made once here and unpacked by every first start
 * instead (src/db/pgdata_template.ts, vendor/pglite/README.md says why).
 *
 *   deno run -A --lock=deno.dev.lock scripts/pgdata_template.ts
 *
 * The directory is PGlite's own, opened once and closed (a clean shutdown),
 * then packed by the system's GNU tar as ustar with sorted names, owner 0 and
 * mtime 0, and gzip without a name or time. Run it again after every upgrade
 * of @electric-sql/pglite: tests/db/pgdata_template_test.ts fails until then.
 */
import { PGlite } from "@electric-sql/pglite";
import { PGLITE_VERSION, TEMPLATE_URL, VERSION_URL } from "../src/db/pgdata_template.ts";

const dir = await Deno.makeTempDir({ prefix: "pgdata-template-" });
try {
  const db = await PGlite.create(dir);
  await db.close();
  const tar = new Deno.Command("sh", {
    args: [
      "-c",
      'tar --format=ustar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$1" -cf - . | gzip -9n',
      "sh",
      dir,
    ],
    stdout: "piped",
  });
  const { success, stdout } = await tar.output();
  if (!success) throw new Error("tar | gzip failed");
  await Deno.writeFile(TEMPLATE_URL, stdout);
  await Deno.writeTextFile(VERSION_URL, PGLITE_VERSION + "\n");
  console.log(`${TEMPLATE_URL.pathname}: ${stdout.byteLength} bytes, @electric-sql/pglite ${PGLITE_VERSION}`);
} finally {
  await Deno.remove(dir, { recursive: true });
}
