/**
 * How a page reads: through the public API, never around it. The typed
 * client (src/client/mod.ts) is given the request's session cookie and a
 * fetch bound to this app (`app.fetch`, no network hop), so a page shows what
 * the API answers that reader, with every check the API makes (session,
 * plan, rate limits), and the access log counts each call as any other.
 */
import type { Context } from "hono";
import { createClient, type InboxServiceClient, InboxServiceError } from "../client/mod.ts";
import { SESSION_COOKIE } from "../auth/cookie.ts";
import type { AppFetch } from "../http/env.ts";
import type { UiEnv } from "./context.ts";

/** The API as the reader with this session token sees it. */
export function readerApi(c: Context<UiEnv>, appFetch: AppFetch, session: string): InboxServiceClient {
  return createClient({
    baseUrl: new URL(c.req.url).origin,
    cookie: `${SESSION_COOKIE}=${session}`,
    // The page's request id on every call made for it, so the log lines of a page go together.
    headers: { "x-request-id": c.get("requestId") },
    // The reader's connection details too: the API sees the reader's address, not the service's.
    fetch: async (request) => await appFetch(request, c.env),
  });
}

/** One answer of the typed client. */
interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The body of a successful call; an `InboxServiceError` with the API's status and error body otherwise. */
export async function read<T>(call: Promise<Answer<T>>): Promise<T> {
  const { data, error, response } = await call;
  if (response.ok && data !== undefined) return data;
  const body = typeof error === "object" && error !== null && "code" in error ? error : undefined;
  throw new InboxServiceError(response.status, body as ConstructorParameters<typeof InboxServiceError>[1]);
}
