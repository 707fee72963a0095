/**
 * Tool results: a success carries structured content and its text rendering;
 * a failure is a tool result with `isError: true` (never a protocol error, so
 * the model reads it and can correct itself) whose text starts with a code:
 * the API's own (`INBOX_NOT_FOUND`, `VALIDATION_ERROR`, `INSUFFICIENT_SCOPE`,
 * `RATE_LIMITED`...) when the API refused the call, or one of the tools'
 * (`NO_MESSAGE`, `NO_CODE`, `SERVICE_UNAVAILABLE`).
 *
 * @module
 */
import type { CallToolResult } from "./sdk.ts";
import { type ApiErrorBody, InboxServiceError } from "../client/mod.ts";

/** A failure a tool reports to the model, with its code. */
export class ToolError extends Error {
  override name = "ToolError";
  constructor(readonly code: string, message: string) {
    super(message);
  }
}

/** A field-level problem, as the API's error body and the input check give them. */
export interface Problem {
  path: string;
  message: string;
}

/** `VALIDATION_ERROR` with each problem named after its field. */
export function validationError(message: string, problems: readonly Problem[]): ToolError {
  const listed = problems.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message)).join("; ");
  return new ToolError("VALIDATION_ERROR", listed ? `${message} (${listed})` : message);
}

/** The API's error answer as a tool failure: its code and message, field problems, hint and Retry-After. */
export function apiError(status: number, body: ApiErrorBody | undefined, retryAfter?: string | null): ToolError {
  if (!body || typeof body.code !== "string") return new ToolError(`HTTP_${status}`, `The API answered ${status}`);
  const extra = body as ApiErrorBody & { hint?: unknown };
  let message = body.error;
  if (body.details && body.details.length > 0) message = validationError(message, body.details).message;
  if (typeof extra.hint === "string" && extra.hint !== "") message += `. ${extra.hint}`;
  if (retryAfter) message += ` (retry after ${retryAfter} s)`;
  return new ToolError(body.code, message);
}

/** The data of an openapi-fetch answer, or the API's error as a ToolError. */
export async function unwrap<T>(
  call: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  const { data, error, response } = await call;
  if (response.ok && data !== undefined) return data;
  throw apiError(response.status, error as ApiErrorBody | undefined, response.headers.get("retry-after"));
}

/** A success: the structured content and its text. */
export function success(structured: Record<string, unknown>, text: string): CallToolResult {
  return { content: [{ type: "text", text }], structuredContent: structured };
}

/** A failure as a tool result whose text starts with its code. */
export function failure(err: ToolError): CallToolResult {
  return { content: [{ type: "text", text: `${err.code}: ${err.message}` }], isError: true };
}

/** Any error a tool met, as the ToolError the model is told. */
export function toToolError(err: unknown): ToolError {
  if (err instanceof ToolError) return err;
  if (err instanceof InboxServiceError) return apiError(err.status, err.body);
  if (err instanceof DOMException && err.name === "AbortError") {
    return new ToolError("CANCELLED", "The call was cancelled");
  }
  return new ToolError("INTERNAL_ERROR", err instanceof Error ? err.message : String(err));
}
