/**
 * The one error type of the service and the one handler that turns errors into
 * the documented error body `{ success: false, error, code, hint?, details? }`.
 */
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { getLogger } from "@logtape/logtape";
import { isConnectionError } from "./db/connection_errors.ts";
import type { DatabaseOutage } from "./db/outage.ts";
import { errorCode } from "./shared/error_code.ts";
import { UNAUTHORIZED_HINTS } from "./auth/hints.ts";

/** One field-level problem in a refused request. */
export interface ErrorDetail {
  path: string;
  message: string;
}

/** The documented error body. */
export interface ErrorBody {
  success: false;
  error: string;
  code: string;
  /**
   * What is wrong and what to do, where `error` must stay the spec's fixed
   * message (401, 403): which credential was missing or refused, which plan
   * a feature needs. Never echoes a credential.
   */
  hint?: string;
  details?: ErrorDetail[];
}

/** An error the client caused or may see: it carries its status, code and message. */
export class ApiError extends Error {
  override name = "ApiError";
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: string,
    message: string,
    readonly details?: ErrorDetail[],
    readonly headers?: Record<string, string>,
    readonly hint?: string,
  ) {
    super(message);
  }

  /** The JSON body of this error. */
  toBody(): ErrorBody {
    const body: ErrorBody = { success: false, error: this.message, code: this.code };
    if (this.hint !== undefined) body.hint = this.hint;
    if (this.details && this.details.length > 0) body.details = this.details;
    return body;
  }
}

/**
 * 401 for a request without a valid credential: always `Unauthorized`, with
 * the cause in `hint` (src/auth/hints.ts).
 */
export const unauthorized = (hint: string, headers?: Record<string, string>): ApiError =>
  new ApiError(401, "UNAUTHORIZED", "Unauthorized", undefined, headers, hint);

/** 404 for a resource that does not exist or belongs to another account. */
export const notFound = (code: string, message: string): ApiError => new ApiError(404, code, message);

const log = getLogger(["inbox", "http"]);

/** Seconds a client is asked to wait while the database does not answer. */
const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/** 503 while the database cannot be reached (a restart, a failover, a network cut). */
const serviceUnavailable = (): ApiError =>
  new ApiError(503, "SERVICE_UNAVAILABLE", "Service temporarily unavailable, retry shortly", undefined, {
    "Retry-After": String(UNAVAILABLE_RETRY_AFTER_SECONDS),
  });

function answer(apiError: ApiError, c: Context): Response {
  for (const [name, value] of Object.entries(apiError.headers ?? {})) c.header(name, value);
  return c.json(apiError.toBody(), apiError.status);
}

/**
 * Answers an error with the documented body. A database that cannot be
 * reached answers 503 with Retry-After, reported to `databaseOutage` (which
 * logs once per outage); other unknown errors become an opaque 500.
 */
export function handleError(err: Error, c: Context, databaseOutage?: DatabaseOutage): Response {
  if (isConnectionError(err)) {
    if (databaseOutage) databaseOutage.report(err);
    else log.warn("The database does not answer: {error}", { error: String(err) });
    return answer(serviceUnavailable(), c);
  }
  const apiError = toApiError(err);
  if (apiError) return answer(apiError, c);
  // Only the message and stack: request bodies and headers may hold secrets.
  log.error("Unhandled error on {method} {path} ({requestId}): {error}", {
    method: c.req.method,
    path: c.req.path,
    requestId: c.get("requestId" as never) ?? "-",
    error: err.stack ?? String(err),
  });
  const body: ErrorBody = { success: false, error: "Internal server error", code: "INTERNAL_ERROR" };
  return c.json(body, 500);
}

/** PostgreSQL's codes for text it cannot store (a NUL character, invalid UTF-8). */
const UNSTORABLE_TEXT = new Set(["22021", "22P05"]);

function toApiError(err: Error): ApiError | undefined {
  if (err instanceof ApiError) return err;
  // Any text field of any request may carry "\u0000"; one answer for all of them.
  if (UNSTORABLE_TEXT.has(errorCode(err) ?? "")) {
    return new ApiError(400, "VALIDATION_ERROR", "Text must not contain NUL characters");
  }
  if (err instanceof HTTPException) {
    // Hono raises these from its own middleware: body limit, malformed JSON.
    switch (err.status) {
      case 413:
        return new ApiError(413, "PAYLOAD_TOO_LARGE", "Request body is too large");
      case 400:
        return new ApiError(400, "VALIDATION_ERROR", err.message || "Bad request");
      case 415:
        // zod-openapi's own media-type check (a non-JSON type with an empty body).
        return new ApiError(
          415,
          "UNSUPPORTED_MEDIA_TYPE",
          "Request body must be JSON (Content-Type: application/json)",
        );
      case 401:
        return unauthorized(UNAUTHORIZED_HINTS.refused);
      default:
        if (err.status >= 400 && err.status < 500) {
          return new ApiError(err.status as ContentfulStatusCode, "BAD_REQUEST", err.message || "Bad request");
        }
    }
  }
  return undefined;
}
