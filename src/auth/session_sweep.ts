/** The minute sweep of sessions: ended ones are removed so the table only holds live sessions. */
import type { Sql } from "../db/client.ts";
import { purgeExpiredSessions } from "./repo.ts";

/** Removes sessions that expired by `now`; returns how many. */
export async function sweepExpiredSessions(deps: { sql: Sql }, now: Date): Promise<number> {
  return await purgeExpiredSessions(deps.sql, now);
}
