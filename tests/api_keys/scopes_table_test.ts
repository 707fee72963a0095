/** docs/api.md's table of what each operation needs is exactly what `deno task scopes:table` prints from the one table. */
import assert from "node:assert/strict";
import { scopesTable } from "../../scripts/scopes_table.ts";

Deno.test("docs/api.md's scopes table is exactly what `deno task scopes:table` prints", async () => {
  const readme = await Deno.readTextFile(new URL("../../docs/api.md", import.meta.url));
  const [start, end] = ["<!-- scopes:start -->", "<!-- scopes:end -->"];
  const from = readme.indexOf(start);
  const to = readme.indexOf(end);
  assert.ok(from >= 0 && to > from, `docs/api.md needs the ${start} and ${end} markers, in that order`);
  assert.equal(
    readme.slice(from + start.length, to).trim(),
    scopesTable().join("\n"),
    "docs/api.md's scopes table is stale: run `deno task scopes:table` and paste its output between the markers",
  );
});
