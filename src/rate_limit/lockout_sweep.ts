/** The minute sweep of lockouts: a series over for longer than its memory counts for nothing. */
import type { Sql } from "../db/client.ts";
import { LOCKOUT_MEMORY_MS } from "./lockout.ts";
import { purgeLockouts } from "./repo.ts";

/** Removes lockouts that ended more than `LOCKOUT_MEMORY_MS` before `now`; returns how many. */
export async function sweepOldLockouts(deps: { sql: Sql }, now: Date): Promise<number> {
  return await purgeLockouts(deps.sql, new Date(now.getTime() - LOCKOUT_MEMORY_MS));
}
