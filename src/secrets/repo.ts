/** SQL of the key check: its one row, and one stored webhook secret to test a key on. */
import type { Db } from "../db/client.ts";

/** The stored check value, if a start has written one. */
export async function readKeyCheck(db: Db): Promise<string | undefined> {
  const rows = await db<{ sealed: string }[]>`SELECT sealed FROM encryption_key_check`;
  return rows[0]?.sealed;
}

/** Stores the check value unless one is there; returns the one that is stored now. */
export async function storeKeyCheck(db: Db, sealed: string): Promise<string> {
  await db`INSERT INTO encryption_key_check (sealed) VALUES (${sealed}) ON CONFLICT (singleton) DO NOTHING`;
  // Another instance may have written its own first (with the same key, or not).
  return (await readKeyCheck(db))!;
}

/** One encrypted webhook secret with the id it is bound to, if any webhook has a secret. */
export async function anyWebhookSecret(db: Db): Promise<{ id: string; secretCiphertext: string } | undefined> {
  const rows = await db<{ id: string; secretCiphertext: string }[]>`
    SELECT id, secret_ciphertext FROM webhooks WHERE secret_ciphertext IS NOT NULL LIMIT 1`;
  return rows[0];
}
