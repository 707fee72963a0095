/**
 * The frame every page shares (head, navigation, the account, sign out) and
 * the small pieces the pages repeat: copy buttons, times, countdowns, error
 * boxes, buttons that call the API, pagers.
 *
 * Every value is written through JSX, which escapes it: mail content, URLs
 * and names never become markup. The only scripts are the UI's own files
 * under the response's nonce; writes happen in ui.js, which reads what to
 * call from `data-request="METHOD /api/..."` and what to do next from
 * `data-done` (see the top of src/ui/assets/ui.js).
 */
import type { Context } from "hono";
import type { Child, PropsWithChildren } from "hono/jsx";
import { html } from "hono/html";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { Account } from "../client/mod.ts";
import type { UiEnv } from "./context.ts";
import { formatTime, remaining } from "./format.ts";

/** Where the UI's own files are served. */
export const ASSETS = "/ui/assets";

/** The sections of the navigation: path and label. */
const SECTIONS = [
  ["/ui/inboxes", "Inboxes"],
  ["/ui/webhooks", "Webhooks"],
  ["/ui/api-keys", "API keys"],
  ["/ui/events", "Events"],
] as const;

/** What a page tells the layout. */
export interface PageOptions {
  title: string;
  /** The navigation entry to mark as current. */
  section?: (typeof SECTIONS)[number][0];
  /** Load live.js (an inbox's messages arriving from the event stream). */
  live?: boolean;
  status?: ContentfulStatusCode;
}

function Layout(
  props: PropsWithChildren<PageOptions & { nonce: string; account: Account | undefined }>,
) {
  const { title, section, live, nonce, account, children } = props;
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{title} · Inbox Service</title>
        <link rel="icon" href={`${ASSETS}/icon.svg`} type="image/svg+xml" />
        <link rel="stylesheet" href={`${ASSETS}/ui.css`} />
        <script nonce={nonce} src={`${ASSETS}/ui.js`} defer></script>
        {live ? <script nonce={nonce} src={`${ASSETS}/live.js`} defer></script> : null}
      </head>
      <body>
        <header class="top">
          <a class="brand" href="/ui/inboxes">Inbox Service</a>
          {account
            ? (
              <nav aria-label="Sections">
                {SECTIONS.map(([path, label]) => (
                  <a href={path} aria-current={path === section ? "page" : undefined}>{label}</a>
                ))}
                <a href="/docs">API reference</a>
              </nav>
            )
            : null}
          {account
            ? (
              <div class="account">
                <span title={account.id}>{account.email}</span>
                <span class="badge">{account.plan}</span>
                <button type="button" class="link" data-request="POST /api/auth/logout" data-done="go:/ui/login">
                  Sign out
                </button>
              </div>
            )
            : null}
        </header>
        <main>
          <ErrorBox />
          {children}
        </main>
      </body>
    </html>
  );
}

/** Answers with a whole page: `body` inside the shared frame. */
export function render(c: Context<UiEnv>, options: PageOptions, body: Child): Response | Promise<Response> {
  const account = c.var.reader?.account;
  const page = (
    <Layout {...options} nonce={c.get("nonce")} account={account}>
      {body}
    </Layout>
  );
  return c.html(html`<!doctype html>${page}`, options.status ?? 200);
}

/** Where ui.js writes the API's refusal of a write (the nearest one to the form or button, else the page's). */
export function ErrorBox() {
  return <p class="error" role="alert" data-error hidden></p>;
}

/** A button that copies `text`. */
export function CopyButton(props: { text: string; label?: string }) {
  return (
    <button type="button" class="copy" data-copy={props.text} title="Copy to the clipboard">
      {props.label ?? "Copy"}
    </button>
  );
}

/** A timestamp, in UTC. */
export function Time(props: { iso: string | null | undefined }) {
  if (!props.iso) return <span class="muted">never</span>;
  return <time datetime={props.iso}>{formatTime(props.iso)}</time>;
}

/** The time left until `iso`, ticking in the browser (ui.js); the instant itself on hover. */
export function Countdown(props: { iso: string; now: Date }) {
  return (
    <time datetime={props.iso} data-countdown title={formatTime(props.iso)}>
      {remaining(Date.parse(props.iso) - props.now.getTime())}
    </time>
  );
}

/** A button that calls the API (`request`: `METHOD /api/...`, with `body` as JSON), then does `done` (see ui.js). */
export function ApiButton(
  props: PropsWithChildren<{ request: string; body?: unknown; done?: string; confirm?: string; class?: string }>,
) {
  return (
    <button
      type="button"
      class={props.class}
      data-request={props.request}
      data-body={props.body === undefined ? undefined : JSON.stringify(props.body)}
      data-done={props.done ?? "reload"}
      data-confirm={props.confirm}
    >
      {props.children}
    </button>
  );
}

/** A table's header row. */
export function Columns(props: { names: readonly string[] }) {
  return (
    <thead>
      <tr>
        {props.names.map((name) => <th key={name}>{name}</th>)}
      </tr>
    </thead>
  );
}

/** The link to the next page of a list, when there is one. */
export function Pager(props: { href: string | undefined }) {
  if (!props.href) return null;
  return (
    <p class="pager">
      <a href={props.href}>Next page →</a>
    </p>
  );
}

/** `path` with `query` (values left out when undefined). */
export function withQuery(path: string, query: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, value);
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

/** `/ui/...` with each id escaped as a path segment. */
export function uiPath(...segments: string[]): string {
  return `/ui/${segments.map(encodeURIComponent).join("/")}`;
}

/** `METHOD /api/...` with each id escaped as a path segment (`data-request` of ui.js). */
export function apiRequest(method: string, ...segments: string[]): string {
  return `${method} /api/${segments.map(encodeURIComponent).join("/")}`;
}
