/**
 * The comment a stream sends after a silence, so that proxies keep it open.
 * The frames of events themselves are made by the database (events/repo.ts
 * `frameSql`), once per read, and written as the bytes it sends.
 */
export const SSE_KEEP_ALIVE = new TextEncoder().encode(": keep-alive\n\n");
