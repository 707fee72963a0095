/** SQL of notifications between instances. */
import type { Tx } from "../db/client.ts";

/** Queues a NOTIFY on `channel`; it is heard by every listening instance if and when the transaction commits. */
export async function notify(tx: Tx, channel: string, payload: string): Promise<void> {
  await tx`SELECT pg_notify(${channel}, ${payload})`;
}
