/**
 * The key check value: proof at start-up that the encryption key is the one
 * the stored webhook secrets were sealed with. A changed or mistyped
 * ENCRYPTION_KEY would otherwise start fine and fail every signed delivery.
 *
 * The value is a fixed text sealed with the key (AES-256-GCM, a random IV),
 * so only the same key opens it, and it tells nothing about the key. The
 * first start writes it; a database that has webhook secrets but no check
 * value yet (written before the check existed) is checked on one of them.
 */
import type { Db } from "../db/client.ts";
import { ConfigError } from "../shared/config_error.ts";
import type { SecretBox } from "./secret_box.ts";
import type { KeySource } from "./key_source.ts";
import { anyWebhookSecret, readKeyCheck, storeKeyCheck } from "./repo.ts";

const CHECK_TEXT = "inbox-service encryption key check";
/** The additional data the check value is bound to (webhook secrets are bound to their webhook's id). */
const CHECK_BINDING = "encryption_key_check";

async function opens(box: SecretBox, sealed: string, boundTo: string, expected?: string): Promise<boolean> {
  try {
    const plain = await box.open(sealed, boundTo);
    return expected === undefined || plain === expected;
  } catch {
    return false;
  }
}

/** Whether `box` holds the database's key; stores the check value when there is none yet. */
export async function keyMatchesDatabase(db: Db, box: SecretBox): Promise<boolean> {
  let sealed = await readKeyCheck(db);
  if (sealed === undefined) {
    const secret = await anyWebhookSecret(db);
    if (secret && !(await opens(box, secret.secretCiphertext, secret.id))) return false;
    sealed = await storeKeyCheck(db, await box.seal(CHECK_TEXT, CHECK_BINDING));
  }
  return await opens(box, sealed, CHECK_BINDING, CHECK_TEXT);
}

/** The start-up refusal for a key that does not open the database's secrets. */
export function wrongKeyError(source: KeySource): ConfigError {
  switch (source.source) {
    case "env":
      return new ConfigError(
        "ENCRYPTION_KEY cannot decrypt the webhook secrets stored in this database: start with the key they were encrypted with",
      );
    case "file":
      return new ConfigError(
        `ENCRYPTION_KEY is unset and the key in ${source.path} cannot decrypt the webhook secrets stored in this database: ` +
          `set ENCRYPTION_KEY to the key they were encrypted with, or put that key back in ${source.path}`,
      );
    case "generated":
      return new ConfigError(
        `ENCRYPTION_KEY is unset and ${source.path} is missing, but this database was set up with another key: ` +
          `set ENCRYPTION_KEY to that key, or put it back in ${source.path}`,
      );
  }
}
