/** Assertions on HTTP responses shared by the API tests. */
import assert from "node:assert/strict";
import type { ErrorBody } from "../../src/errors.ts";

/** A parsed JSON object body. */
export type Json = Record<string, unknown>;

/** The response's JSON body. */
export async function body(res: Response): Promise<Json> {
  return await res.json();
}

/**
 * Asserts the documented error body: the status, `success: false`, the code,
 * a non-empty `error` message (exactly `error` when given). Returns the body.
 */
export async function expectError(res: Response, status: number, code: string, error?: string): Promise<ErrorBody> {
  const json = await body(res);
  const context = JSON.stringify(json);
  assert.equal(res.status, status, context);
  assert.equal(json.success, false, context);
  assert.equal(json.code, code, context);
  assert.equal(typeof json.error, "string", context);
  assert.ok((json.error as string).length > 0, context);
  if (error !== undefined) assert.equal(json.error, error, context);
  return json as unknown as ErrorBody;
}
