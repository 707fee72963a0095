/** Opaque page cursors: the (createdAt, id) of the last row seen, base64url-encoded. */
import { isStorableTime } from "./storable_time.ts";

/** A position in a list: the (time, id) of the last row seen. */
export interface Position {
  createdAt: Date;
  id: string;
}

/** Encodes a position. */
export function encodeCursor(createdAt: Date, id: string): string {
  const json = JSON.stringify([createdAt.toISOString(), id]);
  return new TextEncoder().encode(json).toBase64({ alphabet: "base64url", omitPadding: true });
}

/** Decodes a cursor; undefined for anything this service did not issue. */
export function decodeCursor(cursor: string): Position | undefined {
  try {
    const json = new TextDecoder().decode(Uint8Array.fromBase64(cursor, { alphabet: "base64url" }));
    const [at, id] = JSON.parse(json) as unknown[];
    const createdAt = new Date(String(at));
    // Any other time would fail in the query (see storable_time.ts).
    if (typeof id !== "string" || !isStorableTime(createdAt.getTime())) {
      return undefined;
    }
    return { createdAt, id };
  } catch {
    return undefined;
  }
}

/** The page size when a list request names none. */
export const DEFAULT_PAGE_SIZE = 20;

/** A page of rows and the cursor of the next one (null on the last page). */
export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

/**
 * Turns `limit + 1` fetched rows into a page: the extra row only tells that a
 * next page exists (no count query), and `position` gives the cursor of the
 * last row kept.
 */
export function toPage<T>(rows: T[], limit: number, position: (row: T) => [Date, string]): Page<T> {
  const data = rows.slice(0, limit);
  const last = data.at(-1);
  return { data, nextCursor: rows.length > limit && last ? encodeCursor(...position(last)) : null };
}
