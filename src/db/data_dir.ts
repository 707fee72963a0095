/**
 * DATA_DIR problems as start-up refusals: one line naming DATA_DIR, the
 * directory and the cause, in place of the file system's error and its stack.
 */
import { ConfigError } from "../shared/config_error.ts";
import { fileErrorCause, isFileSystemError } from "../shared/file_error.ts";

/** The refusal for a DATA_DIR the service cannot create, read or write. */
function dataDirError(dataDir: string, err: unknown): ConfigError {
  return new ConfigError(
    `DATA_DIR: cannot write to ${dataDir} (${
      fileErrorCause(err)
    }): give this user a writable directory, or set DATABASE_URL`,
  );
}

/** Runs a file system step on DATA_DIR, turning its failure into the refusal. */
export async function onDataDir<T>(dataDir: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    if (isFileSystemError(err)) throw dataDirError(dataDir, err);
    throw err;
  }
}
