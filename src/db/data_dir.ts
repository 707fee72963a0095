/**
 * DATA_DIR problems as start-up refusals: one line naming DATA_DIR, the
 * directory and the cause, in place of the file system's error and its stack.
 */
import { ConfigError } from "../config.ts";

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
export function isFileSystemError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return err instanceof Error && typeof code === "string" && /^E[A-Z]+$/.test(code);
}

/** The refusal for a DATA_DIR the service cannot create, read or write. */
export function dataDirError(dataDir: string, err: unknown): ConfigError {
  const code = (err as { code?: unknown }).code;
  const cause = (typeof code === "string" ? CAUSES[code] : undefined) ??
    (err instanceof Error ? err.message : String(err));
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
