/**
 * `/ui`: the web UI, HTML pages rendered on the server (hono/jsx, no build
 * step) behind the session cookie, plus the UI's own stylesheet and scripts.
 * Like /docs these are not operations of the HTTP API and are in neither
 * OpenAPI document.
 *
 * Reads go through the public API in process (src/ui/api.ts), writes through
 * the public JSON API from the page's script (src/ui/assets/ui.js): this
 * folder holds no route of its own to the data and never opens the
 * database. Every response carries the UI's policy (src/ui/policy.ts).
 */
import { Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { createMiddleware } from "hono/factory";
import { getLogger } from "@logtape/logtape";
import type { AppFetch } from "../http/env.ts";
import type { Clock } from "../shared/clock.ts";
import { readSessionCookie } from "../auth/cookie.ts";
import { InboxServiceError } from "../client/mod.ts";
import type { UiEnv } from "./context.ts";
import { uiPolicy } from "./policy.ts";
import { readerApi } from "./api.ts";
import { withQuery } from "./layout.tsx";
import { AFTER_SIGN_IN, nextPage, signInPage } from "./pages/sign_in.tsx";
import { inboxesPage } from "./pages/inboxes.tsx";
import { inboxPage } from "./pages/inbox.tsx";
import { messagePage } from "./pages/message.tsx";
import { webhooksPage } from "./pages/webhooks.tsx";
import { webhookPage } from "./pages/webhook.tsx";
import { apiKeysPage } from "./pages/api_keys.tsx";
import { eventsPage } from "./pages/events.tsx";
import { problemPage } from "./pages/problem.tsx";

const log = getLogger(["inbox", "ui"]);

/** The sign-in page. */
export const SIGN_IN_PATH = "/ui/login";

/** The UI's own files (src/ui/assets/), by name, with their types: nothing else is served from there. */
const ASSET_TYPES: Record<string, string> = {
  "ui.css": "text/css; charset=utf-8",
  "ui.js": "text/javascript; charset=utf-8",
  "live.js": "text/javascript; charset=utf-8",
  "icon.svg": "image/svg+xml",
};

/** The pages behind the session cookie: where a page goes with none, or with one that ended. */
function signInFirst(c: { req: { url: string } }): string {
  const url = new URL(c.req.url);
  return withQuery(SIGN_IN_PATH, { next: url.pathname + url.search });
}

/**
 * Lets a request through with a live session (the account, as GET /api/me
 * answers it, and the API as this reader, on `c.var.reader`); sends it to
 * the sign-in page otherwise.
 */
function signedIn(appFetch: AppFetch) {
  return createMiddleware<UiEnv>(async (c, next) => {
    const session = readSessionCookie(c);
    if (session !== undefined) {
      const api = readerApi(c, appFetch, session);
      const me = await api.me();
      if (me.data) {
        c.set("reader", { api, account: me.data });
        return await next();
      }
      if (me.response.status !== 401) throw new InboxServiceError(me.response.status, me.error);
    }
    return c.redirect(signInFirst(c), 302);
  });
}

/** The UI routes; `appFetch` is the whole app, which the pages read through. */
export function uiRoutes(deps: { clock: Clock }, appFetch: AppFetch): Hono<UiEnv> {
  const app = new Hono<UiEnv>();
  app.use("/ui", uiPolicy());
  app.use("/ui/*", uiPolicy());

  app.get("/ui/assets/:name", async (c) => {
    const name = c.req.param("name");
    const type = ASSET_TYPES[name];
    if (type === undefined) return c.notFound();
    // Read on each request: the stylesheet is there to be edited, and a change shows on the next load.
    const bytes = await Deno.readFile(new URL(`./assets/${name}`, import.meta.url));
    return c.body(bytes, 200, { "Content-Type": type });
  });

  app.get(SIGN_IN_PATH, async (c) => {
    // A reader who is signed in already goes straight on.
    const session = readSessionCookie(c);
    if (session !== undefined && (await readerApi(c, appFetch, session).me()).data) {
      return c.redirect(nextPage(c.req.query("next")), 302);
    }
    return await signInPage(c);
  });

  const reader = signedIn(appFetch);
  // The sign-in check is the next page's.
  app.get("/ui", (c) => c.redirect(AFTER_SIGN_IN, 302));
  app.get("/ui/inboxes", reader, (c) => inboxesPage(c, deps.clock.now()));
  app.get("/ui/inboxes/:id", reader, (c) => inboxPage(c, deps.clock.now()));
  app.get("/ui/inboxes/:id/messages/:messageId", reader, messagePage);
  app.get("/ui/webhooks", reader, webhooksPage);
  app.get("/ui/webhooks/:id", reader, webhookPage);
  app.get("/ui/api-keys", reader, apiKeysPage);
  app.get("/ui/events", reader, eventsPage);

  app.onError(async (err, c) => {
    if (err instanceof InboxServiceError) {
      // The session ended between the check and the read.
      if (err.status === 401) return c.redirect(signInFirst(c), 302);
      return await problemPage(c, err.status as ContentfulStatusCode, err.body);
    }
    log.error("The page {path} failed ({requestId}): {error}", {
      path: c.req.path,
      requestId: c.get("requestId") ?? "-",
      error: err.stack ?? String(err),
    });
    return await problemPage(c, 500, undefined);
  });
  return app;
}
