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
import { type Handler, Hono, type MiddlewareHandler } from "hono";
import type { AppFetch } from "../http/env.ts";
import type { Clock } from "../shared/clock.ts";
import { onFirstUse } from "../shared/on_first_use.ts";
import type { UiEnv } from "./context.ts";
import { uiPolicy } from "./policy.ts";
import { AFTER_SIGN_IN, SIGN_IN_PATH } from "./paths.ts";
import type { UiPage } from "./handlers.ts";

/** The UI's own files (src/ui/assets/), by name, with their types: nothing else is served from there. */
const ASSET_TYPES: Record<string, string> = {
  "ui.css": "text/css; charset=utf-8",
  "ui.js": "text/javascript; charset=utf-8",
  "live.js": "text/javascript; charset=utf-8",
  "icon.svg": "image/svg+xml",
};

/** The UI routes; `appFetch` is the whole app, which the pages read through. */
export function uiRoutes(deps: { clock: Clock }, appFetch: AppFetch): Hono<UiEnv> {
  // The pages and what they read through, loaded with the first request under /ui: the typed client, openapi-fetch
  // and the pages added 2 MiB of RSS to every start (tests/bench/README.md, "embedded").
  const handlers = onFirstUse(async () => (await import("./handlers.ts")).uiHandlers(deps, appFetch));
  const page = (name: UiPage): Handler<UiEnv> => async (c) => await (await handlers()).pages[name](c);
  const reader: MiddlewareHandler<UiEnv> = async (c, next) => await (await handlers()).reader(c, next);

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

  app.get(SIGN_IN_PATH, page("signIn"));
  // The sign-in check is the next page's.
  app.get("/ui", (c) => c.redirect(AFTER_SIGN_IN, 302));
  app.get("/ui/inboxes", reader, page("inboxes"));
  app.get("/ui/inboxes/:id", reader, page("inbox"));
  app.get("/ui/inboxes/:id/messages/:messageId", reader, page("message"));
  app.get("/ui/webhooks", reader, page("webhooks"));
  app.get("/ui/webhooks/:id", reader, page("webhook"));
  app.get("/ui/api-keys", reader, page("apiKeys"));
  app.get("/ui/events", reader, page("events"));

  app.onError(async (err, c) => await (await handlers()).onError(err, c));
  return app;
}
