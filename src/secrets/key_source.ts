/**
 * Where the encryption key comes from: ENCRYPTION_KEY, or, for the embedded
 * database only, a key generated once into DATA_DIR. With a shared PostgreSQL
 * a generated key would differ per instance, so start-up refuses instead.
 */
import { join } from "node:path";
import type { Config } from "../config.ts";
import { ConfigError } from "../config.ts";

const KEY_FILE = "encryption.key";

/** The base64 key to encrypt webhook secrets with. */
export async function resolveEncryptionKey(config: Config): Promise<string> {
  if (config.encryptionKey) return config.encryptionKey;
  if (config.databaseUrl) {
    throw new ConfigError(
      "ENCRYPTION_KEY is required with DATABASE_URL: every instance must encrypt webhook secrets with the same key. Generate one with: openssl rand -base64 32",
    );
  }
  const path = join(config.dataDir, KEY_FILE);
  try {
    return (await Deno.readTextFile(path)).trim();
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  await Deno.mkdir(config.dataDir, { recursive: true });
  const key = crypto.getRandomValues(new Uint8Array(32)).toBase64();
  // createNew: two processes racing here cannot both write a key.
  await Deno.writeTextFile(path, key + "\n", { createNew: true, mode: 0o600 });
  return key;
}
