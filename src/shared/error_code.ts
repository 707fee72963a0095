/**
 * The `code` of an error, as Node and Deno (`ECONNREFUSED`, `EADDRINUSE`),
 * postgres.js (`CONNECTION_CLOSED`) and PostgreSQL (`23505`) set it.
 */

/** `err.code` when it is a string; undefined for anything else (including non-errors). */
export function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null | undefined)?.code;
  return typeof code === "string" ? code : undefined;
}
