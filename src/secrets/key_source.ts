/**
 * Where the encryption key comes from: ENCRYPTION_KEY, or, for the embedded
 * database only, a key generated once into DATA_DIR. With a shared PostgreSQL
 * a generated key would differ per instance, so start-up refuses instead.
 */
import { join } from "node:path";
import { type Config, ENCRYPTION_KEY_PATTERN } from "../config.ts";
import { ConfigError } from "../shared/config_error.ts";
import { onDataDir } from "../db/data_dir.ts";

const KEY_FILE = "encryption.key";

/**
 * The key and where it came from: ENCRYPTION_KEY, the key file in DATA_DIR,
 * or a key generated into that file just now (`path`).
 */
export type KeySource =
  | { key: string; source: "env" }
  | { key: string; source: "file" | "generated"; path: string };

/** The base64 key to encrypt webhook secrets with. */
export async function resolveEncryptionKey(
  config: Pick<Config, "encryptionKey" | "databaseUrl" | "dataDir">,
): Promise<KeySource> {
  if (config.encryptionKey) return { key: config.encryptionKey, source: "env" };
  if (config.databaseUrl) {
    throw new ConfigError(
      "ENCRYPTION_KEY is required with DATABASE_URL: every instance must encrypt webhook secrets with the same key. Generate one with: openssl rand -base64 32",
    );
  }
  const path = join(config.dataDir, KEY_FILE);
  return await onDataDir(config.dataDir, async (): Promise<KeySource> => {
    let stored: string | undefined;
    try {
      stored = (await Deno.readTextFile(path)).trim();
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
    if (stored !== undefined) {
      // Checked as ENCRYPTION_KEY is, before the database is opened or migrated.
      if (!ENCRYPTION_KEY_PATTERN.test(stored)) {
        throw new ConfigError(
          `DATA_DIR: ${path} does not hold a key (32 bytes in base64): restore the key this database was set up with, or set ENCRYPTION_KEY`,
        );
      }
      return { key: stored, source: "file", path };
    }
    await Deno.mkdir(config.dataDir, { recursive: true });
    const key = crypto.getRandomValues(new Uint8Array(32)).toBase64();
    // createNew: two processes racing here cannot both write a key.
    await Deno.writeTextFile(path, key + "\n", { createNew: true, mode: 0o600 });
    return { key, source: "generated", path };
  });
}
