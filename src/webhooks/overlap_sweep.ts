/** The minute sweep of rotated secrets: a replaced secret is kept, encrypted, only while its overlap lasts. */
import type { Sql } from "../db/client.ts";
import { dropEndedOverlaps } from "./repo.ts";

/** Forgets the previous secrets whose overlap ended by `now`; returns how many. */
export async function sweepEndedOverlaps(deps: { sql: Sql }, now: Date): Promise<number> {
  return await dropEndedOverlaps(deps.sql, now);
}
