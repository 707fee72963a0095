/** HTTP layer of the event log: a page of events, and the live stream (Server-Sent Events). Every plan. */
import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { securityOf } from "../auth/scopes.ts";
import { getLogger } from "@logtape/logtape";
import type { AppEnv } from "../http/env.ts";
import type { DatabaseOutage } from "../db/outage.ts";
import { createRouter } from "../http/router.ts";
import { sseResponse } from "../http/sse_response.ts";
import { NoStoreHeaders } from "../http/security_headers.ts";
import { errorResponses } from "../http/schemas.ts";
import { EventListQuerySchema, EventListSchema, EventStreamHeadersSchema, EventStreamQuerySchema } from "./schemas.ts";
import { cursorOf, type EventDeps, followEvents, listEvents } from "./service.ts";
import type { FrameEvent } from "./repo.ts";
import type { Config } from "../config.ts";
import type { Revocations } from "../auth/revocations.ts";
import { EVENT_STREAMS, type OpenRequests } from "../rate_limit/open_requests.ts";
import { SSE_KEEP_ALIVE } from "./sse_frame.ts";

const log = getLogger(["inbox", "events"]);

const listRoute = createRoute({
  method: "get",
  path: "/api/events",
  request: { query: EventListQuerySchema },
  responses: {
    200: {
      description: "A page of events, oldest first",
      headers: NoStoreHeaders,
      content: { "application/json": { schema: EventListSchema } },
    },
    ...errorResponses(400, 401, 403),
  },
  security: securityOf("GET /api/events"),
});

const streamRoute = createRoute({
  method: "get",
  path: "/api/events/stream",
  request: { query: EventStreamQuerySchema, headers: EventStreamHeadersSchema },
  responses: {
    200: {
      description: "Server-Sent Events: one frame per event (id, event, data), keep-alive comments",
      headers: NoStoreHeaders,
      content: { "text/event-stream": { schema: z.string() } },
    },
    ...errorResponses(400, 401, 403, 429),
  },
  security: securityOf("GET /api/events/stream"),
});

/** The event routes; `/api` authentication is applied by the app. */
export function eventRoutes(
  deps: EventDeps & {
    databaseOutage: Pick<DatabaseOutage, "absorb">;
    openRequests: Pick<OpenRequests, "open">;
    revocations: Pick<Revocations, "hold">;
    config: Pick<Config, "eventStreamsPerAccount" | "eventStreamKeepAliveMs">;
  },
): OpenAPIHono<AppEnv> {
  return createRouter().openapi(listRoute, async (c) => {
    const page = await listEvents(deps, c.get("principal"), c.req.valid("query"));
    // The stored envelopes are JSON already: spliced in as they are, byte for byte what webhooks get.
    return c.body(
      `{"data":[${page.data.join(",")}],"nextCursor":${JSON.stringify(page.nextCursor)}}`,
      200,
      { "content-type": "application/json" },
    ) as never;
  }).openapi(streamRoute, async (c) => {
    const principal = c.get("principal");
    const { accountId, credential } = principal;
    const query = c.req.valid("query");
    const lastEventId = c.req.valid("header")["last-event-id"];
    // A reconnecting EventSource sends Last-Event-ID; it wins over the ?after= of the first connection.
    const afterSeq = lastEventId !== undefined
      ? await cursorOf(deps, principal, lastEventId, "Last-Event-ID")
      : query.after !== undefined
      ? await cursorOf(deps, principal, query.after)
      : undefined;
    const from = { afterSeq, types: query.types };
    const close = await deps.openRequests.open(accountId, EVENT_STREAMS, deps.config.eventStreamsPerAccount);
    // The stream ends when its key is revoked or its session ends, on whichever instance that happens.
    const credentialHold = deps.revocations.hold(credential);
    return sseResponse(async (out) => {
      const frames = {
        write: (chunk: Uint8Array) => out.write(chunk),
        offer: (event: FrameEvent) => out.offer(event.frame),
        ping: () => void out.offer(SSE_KEEP_ALIVE),
      };
      try {
        await followEvents(deps, principal, from, frames, out.signal);
      } catch (err) {
        // The stream ends; the client reconnects with Last-Event-ID and loses nothing. A database
        // that does not answer is the outage's one warning, not a line per stream.
        if (!deps.databaseOutage.absorb(err)) {
          log.warn("An event stream ended on an error: {error}", { error: String(err) });
        }
      } finally {
        credentialHold.release();
        close();
      }
    }, {
      until: credentialHold.signal,
      // A client that has read nothing for two keep-alive intervals while events wait is gone or stuck.
      stallMs: deps.config.eventStreamKeepAliveMs * 2,
    }) as never;
  });
}
