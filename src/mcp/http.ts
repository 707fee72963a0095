/**
 * `/mcp`: the Model Context Protocol over Streamable HTTP, stateless. Each
 * POST gets its own `McpServer` and transport (the SDK's Web-standard one,
 * which takes the Request and gives the Response Hono returns), so any
 * instance answers any call and nothing is kept between calls.
 *
 * Authentication is the API's: `Authorization: Bearer isk_...`, checked by
 * the `/api` middleware, a missing or bad key answered 401 with the error
 * body before any MCP message is read. The tools then call the public API
 * in process (`app.fetch`, no network hop) with that same key, the caller's
 * connection details and request id, so every check the API makes for
 * that key (what it may reach, rate and plan limits, the revocation of a
 * pending wait) applies to every tool as to the caller's own request.
 *
 * GET (and DELETE) answer 405: a stateless server has no stream of its own
 * to offer (nothing is ever sent outside a call's answer), which the
 * transport specification lets a server say with 405, and SDK clients
 * accept. An idle stream per client would only hold a connection, and hold
 * up a graceful shutdown.
 *
 * @module
 */
import { Hono } from "hono";
import type { AppEnv, AppFetch } from "../http/env.ts";
import type { Config } from "../config.ts";
import type { Sql } from "../db/client.ts";
import type { Clock } from "../shared/clock.ts";
import type { AuthCache } from "../api_keys/auth_cache.ts";
import { authenticate } from "../auth/middleware.ts";
import { bearerToken } from "../http/bearer.ts";
import { bodyGuards } from "../http/guards.ts";
import { noStore } from "../http/security_headers.ts";
import { ApiError, unauthorized } from "../errors.ts";
import { onFirstUse } from "../shared/on_first_use.ts";

/**
 * The MCP server, the SDK and the typed client the tools call the API with,
 * loaded with the first call, not at start: the SDK added 11 MiB of RSS to
 * every start.
 */
const mcpModules = onFirstUse(() =>
  Promise.all([import("./server.ts"), import("./sdk.ts"), import("../client/mod.ts")])
);

/** The path of the MCP endpoint. */
export const MCP_PATH = "/mcp";

/** `response` with `onEnd` run once its body has been read to the end or cancelled (or at once without a body). */
export function endingWith(response: Response, onEnd: () => void): Response {
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    onEnd();
  };
  if (response.body === null) {
    end();
    return response;
  }
  const reader = response.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) {
        controller.close();
        end();
      } else {
        controller.enqueue(value);
      }
    },
    async cancel(reason) {
      end();
      await reader.cancel(reason);
    },
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/** The hint of a call to /mcp without a key: agents authenticate with one, never with a browser's session. */
const MCP_NEEDS_KEY = "MCP clients authenticate with an API key: send `Authorization: Bearer isk_...` " +
  "(a key made with `scopes` and `inboxIds` limits every tool as it limits the API)";

/** The MCP endpoint; `appFetch` is the whole app, which the tools call for the API. */
export function mcpRoutes(
  deps: { sql: Sql; clock: Clock; authCache: AuthCache; config: Pick<Config, "maxBodyBytes"> },
  appFetch: AppFetch,
): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const auth = authenticate(deps);
  app.use(MCP_PATH, noStore(), async (c, next) => {
    // Agents present a key; a browser's session cookie is no credential here.
    if (c.req.header("authorization") === undefined) throw unauthorized(MCP_NEEDS_KEY);
    return await auth(c, next);
  });

  app.post(MCP_PATH, ...bodyGuards(deps.config.maxBodyBytes), async (c) => {
    const env = c.env;
    const [{ connectMcpServer }, { WebStandardStreamableHTTPServerTransport }, { createClient }] = await mcpModules();
    const api = createClient({
      baseUrl: new URL(c.req.url).origin,
      // The middleware above accepted this header, so it holds a key.
      apiKey: bearerToken(c.req.header("authorization"))!,
      headers: { "x-request-id": c.get("requestId") },
      fetch: async (request) => await appFetch(request, env),
    });
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    const server = await connectMcpServer(api, transport);
    // Closing the server aborts the calls still running: a client that goes away (the body
    // cancelled) ends its API waits with it, rather than holding a wait of its account's quota.
    return endingWith(await transport.handleRequest(c.req.raw), () => void server.close());
  });

  app.on(["GET", "DELETE"], MCP_PATH, () => {
    throw new ApiError(405, "METHOD_NOT_ALLOWED", "Use POST: this MCP endpoint is stateless", undefined, {
      Allow: "POST",
    });
  });
  return app;
}
