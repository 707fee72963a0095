/**
 * Which driver errors mean "the database is not there right now" rather than
 * "this statement is wrong": the socket errors Node reports, postgres.js's own
 * connection codes, and the PostgreSQL codes a server sends while it shuts
 * down, starts up or is out of connections. They answer 503 with Retry-After,
 * and at start-up they are worth another try.
 */
import { errorCode } from "../shared/error_code.ts";

/** Socket errors (Node's codes, which Deno's node:net uses too). */
const SOCKET_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EHOSTDOWN",
  "ENETDOWN",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/** postgres.js's codes for a connection that failed, closed or timed out. */
const DRIVER_CODES = new Set(["CONNECTION_CLOSED", "CONNECTION_ENDED", "CONNECTION_DESTROYED", "CONNECT_TIMEOUT"]);

/**
 * PostgreSQL codes: admin_shutdown, crash_shutdown, cannot_connect_now (starting
 * up or in recovery), too_many_connections; class 08 (connection exception)
 * is matched by its prefix.
 */
const SERVER_CODES = new Set(["57P01", "57P02", "57P03", "53300"]);

/** Whether `err` (or what it wraps) says the database cannot be reached. */
export function isConnectionError(err: unknown): boolean {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = errorCode(e);
    if (!code) continue;
    if (SOCKET_CODES.has(code) || DRIVER_CODES.has(code) || SERVER_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code)) {
      return true;
    }
  }
  return false;
}

/** A short cause for a log line or a start-up refusal: "connection refused", "host not found". */
export function connectionErrorReason(err: unknown): string {
  switch (errorCode(err)) {
    case "ECONNREFUSED":
      return "connection refused";
    case "ECONNRESET":
    case "EPIPE":
    case "CONNECTION_CLOSED":
      return "connection closed by the server";
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return "host not found";
    case "ETIMEDOUT":
    case "CONNECT_TIMEOUT":
      return "connection timed out";
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return "host unreachable";
    case "57P01":
    case "57P02":
      return "the server is shutting down";
    case "57P03":
      return "the server is starting up";
    case "53300":
      return "too many connections";
    default:
      return err instanceof Error ? err.message : String(err);
  }
}
