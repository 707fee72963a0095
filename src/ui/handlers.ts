/**
 * What the UI's routes (src/ui/routes.ts) run: the sign-in check, the pages
 * and the error page. Loaded with the first request under /ui, not at start:
 * the pages, the typed client they read through and openapi-fetch are only
 * needed once someone opens the UI.
 */
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { createMiddleware } from "hono/factory";
import { getLogger } from "@logtape/logtape";
import type { AppFetch } from "../http/env.ts";
import type { Clock } from "../shared/clock.ts";
import { readSessionCookie } from "../auth/cookie.ts";
import { InboxServiceError } from "../client/mod.ts";
import type { UiEnv } from "./context.ts";
import { readerApi } from "./api.ts";
import { withQuery } from "./layout.tsx";
import { SIGN_IN_PATH } from "./paths.ts";
import { nextPage, signInPage } from "./pages/sign_in.tsx";
import { inboxesPage } from "./pages/inboxes.tsx";
import { inboxPage } from "./pages/inbox.tsx";
import { messagePage } from "./pages/message.tsx";
import { webhooksPage } from "./pages/webhooks.tsx";
import { webhookPage } from "./pages/webhook.tsx";
import { apiKeysPage } from "./pages/api_keys.tsx";
import { eventsPage } from "./pages/events.tsx";
import { problemPage } from "./pages/problem.tsx";

const log = getLogger(["inbox", "ui"]);

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

/** The UI's handlers; `appFetch` is the whole app, which the pages read through. */
export function uiHandlers(deps: { clock: Clock }, appFetch: AppFetch) {
  return {
    /** Behind every page but the sign-in page. */
    reader: signedIn(appFetch),
    /** The pages, by the name the route table gives them. */
    pages: {
      signIn: async (c: Context<UiEnv>) => {
        // A reader who is signed in already goes straight on.
        const session = readSessionCookie(c);
        if (session !== undefined && (await readerApi(c, appFetch, session).me()).data) {
          return c.redirect(nextPage(c.req.query("next")), 302);
        }
        return await signInPage(c);
      },
      inboxes: (c: Context<UiEnv>) => inboxesPage(c, deps.clock.now()),
      inbox: (c: Context<UiEnv>) => inboxPage(c, deps.clock.now()),
      message: messagePage,
      webhooks: webhooksPage,
      webhook: webhookPage,
      apiKeys: apiKeysPage,
      events: eventsPage,
    },
    onError: async (err: Error, c: Context<UiEnv>) => {
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
    },
  };
}

/** A page's name in the route table. */
export type UiPage = keyof ReturnType<typeof uiHandlers>["pages"];
