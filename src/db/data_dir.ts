/**
 * DATA_DIR problems as start-up refusals: one line naming DATA_DIR, the
 * directory and the cause, in place of the file system's error and its stack.
 */
import { ConfigError } from "../shared/config_error.ts";
import { errorCode } from "../shared/error_code.ts";

const CAUSES: Record<string, string> = {
  EACCES: "permission denied",
  EPERM: "permission denied",
  EROFS: "read-only file system",
  ENOTDIR: "a part of the path is a file, not a directory",
  EEXIST: "it is a file, not a directory",
  ENOSPC: "no space left on the device",
  EDQUOT: "disk quota exceeded",
  ELOOP: "too many symbolic links",
  ENAMETOOLONG: "the path is too long",
};

/** Whether `err` is a file system error (which `dataDirError` can describe). */
function isFileSystemError(err: unknown): boolean {
  return err instanceof Error && /^E[A-Z]+$/.test(errorCode(err) ?? "");
}

/** The refusal for a DATA_DIR the service cannot create, read or write. */
function dataDirError(dataDir: string, err: unknown): ConfigError {
  const code = errorCode(err);
  const cause = (code === undefined ? undefined : CAUSES[code]) ?? (err instanceof Error ? err.message : String(err));
  return new ConfigError(
    `DATA_DIR: cannot write to ${dataDir} (${cause}): give this user a writable directory, or set DATABASE_URL`,
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
