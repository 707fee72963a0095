/** SQL about the database itself. */
import type { Db } from "./client.ts";

/** One round trip: resolves when the database answers, rejects with the driver's error. */
export async function ping(db: Db): Promise<void> {
  await db`SELECT 1`;
}
