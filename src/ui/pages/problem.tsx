/**
 * What a page shows when the API refused its read: the API's own message and
 * hint (a plan that lacks webhooks or API keys says which plan has them and
 * how an operator changes it), with the API's status.
 */
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { ApiErrorBody } from "../../client/mod.ts";
import type { UiEnv } from "../context.ts";
import { render } from "../layout.tsx";

/** Titles by status. */
const TITLES: Record<number, string> = {
  400: "That address is not quite right",
  403: "Not available to this account",
  404: "Not found",
  429: "Too many requests",
  503: "The service is not ready",
};

/** A page for the API's answer `status` with its error body (none for a failure of the page itself). */
export function problemPage(c: Context<UiEnv>, status: ContentfulStatusCode, body: ApiErrorBody | undefined) {
  const title = TITLES[status] ?? "Something went wrong";
  return render(
    c,
    { title, status },
    <section class="narrow problem">
      <h1>{title}</h1>
      {body ? <p>{body.error}</p> : <p>The page could not be shown (request {c.get("requestId")}).</p>}
      {body?.hint ? <p class="muted">{body.hint}</p> : null}
      {body?.details?.map((d) => (
        <p class="muted">
          <code>{d.path}</code>: {d.message}
        </p>
      ))}
      <p>
        <a href="/ui/inboxes">Back to the inboxes</a>
      </p>
    </section>,
  );
}
