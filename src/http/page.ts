/** The `cursor` of a list request, read for the rules that page through rows. */
import { ApiError } from "../errors.ts";
import { decodeCursor, type Position } from "../shared/cursor.ts";

/** The 400 for a cursor this service did not issue. */
export function invalidCursor(): ApiError {
  return new ApiError(400, "VALIDATION_ERROR", "Invalid query parameters", [
    { path: "cursor", message: "Invalid cursor" },
  ]);
}

/** The position a cursor names (undefined without one); 400 VALIDATION_ERROR for one this service did not issue. */
export function pagePosition(cursor: string | undefined): Position | undefined {
  if (!cursor) return undefined;
  const position = decodeCursor(cursor);
  if (!position) throw invalidCursor();
  return position;
}
