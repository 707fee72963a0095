/**
 * File system errors in words, for the start-up refusals that name a path
 * (DATA_DIR, SMTP_TLS_CERT, SMTP_TLS_KEY): the cause a user can act on, in
 * place of the error's class and stack.
 */
import { errorCode } from "./error_code.ts";

const CAUSES: Record<string, string> = {
  ENOENT: "no such file or directory",
  EISDIR: "it is a directory",
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

/** Whether `err` is a file system error (which `fileErrorCause` can describe). */
export function isFileSystemError(err: unknown): boolean {
  return err instanceof Error && /^E[A-Z]+$/.test(errorCode(err) ?? "");
}

/** The cause of a file system error in a few words (the error's own message when it is not a known one). */
export function fileErrorCause(err: unknown): string {
  const code = errorCode(err);
  return (code === undefined ? undefined : CAUSES[code]) ?? (err instanceof Error ? err.message : String(err));
}
