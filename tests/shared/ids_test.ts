/** Ids made in TypeScript (`newId`) and in a statement (`new_id`, live SQL) have one form and sort by time alike. */
import assert from "node:assert/strict";
import { createTestDb } from "../_helpers/db.ts";
import { newId } from "../../src/shared/ids.ts";

const FORM = /^dlv_[0-9abcdefghjkmnpqrstvwxyz]{26}$/;

Deno.test("new_id in SQL makes newId's form: prefix, 10 characters of time, 16 random ones", async () => {
  const db = await createTestDb();
  try {
    const at = new Date("2026-11-27T13:31:47.123Z");
    const rows = await db.sql<{ id: string }[]>`SELECT new_id('dlv', ${at}) AS id FROM generate_series(1, 1000)`;
    const ids = rows.map((r) => r.id);
    const ours = newId("dlv", at.getTime());
    for (const id of ids) assert.match(id, FORM);
    assert.match(ours, FORM);
    assert.ok(ids.every((id) => id.slice(0, 14) === ours.slice(0, 14)), "the same time part for the same millisecond");
    assert.equal(new Set(ids).size, ids.length, "no two alike");
    // Every character of the alphabet turns up in the random parts: 5 bits of each byte, all used.
    assert.equal(new Set(ids.flatMap((id) => [...id.slice(14)])).size, 32);
    const later = (await db.sql<{ id: string }[]>`SELECT new_id('dlv', ${new Date(at.getTime() + 1)}) AS id`)[0]!.id;
    assert.ok(later > ids[0]!.slice(0, 14) + "zzzzzzzzzzzzzzzz", "a later millisecond sorts after");
  } finally {
    await db.close();
  }
});
