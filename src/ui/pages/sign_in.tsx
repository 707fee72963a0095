/** The sign-in page: POST /api/auth/login from ui.js, which sets the session cookie; then on to `next`. */
import type { Context } from "hono";
import type { UiEnv } from "../context.ts";
import { ErrorBox, render } from "../layout.tsx";
import { AFTER_SIGN_IN } from "../paths.ts";

/** `next` if it is a page of the UI (never another site: no `//host`, no scheme, no backslash), else the inboxes. */
export function nextPage(next: string | undefined): string {
  return next !== undefined && /^\/ui(?:[/?][^\\\s]*)?$/.test(next) && !next.startsWith("/ui//") ? next : AFTER_SIGN_IN;
}

/** GET /ui/login */
export function signInPage(c: Context<UiEnv>) {
  const next = nextPage(c.req.query("next"));
  return render(
    c,
    { title: "Sign in" },
    <section class="narrow">
      <h1>Sign in</h1>
      <form class="card stack" data-request="POST /api/auth/login" data-done={`go:${next}`}>
        <label>
          Email
          <input type="email" name="email" autocomplete="username" required />
        </label>
        <label>
          Password
          <input type="password" name="password" autocomplete="current-password" required />
        </label>
        <ErrorBox />
        <button type="submit">Sign in</button>
      </form>
      <p class="muted">
        No account yet? An operator creates one with{" "}
        <code>deno task admin create-account --email you@example.com --password '…' --plan pro</code>, or register with
        {" "}
        <code>POST /api/auth/register</code> (see the <a href="/docs">API reference</a>).
      </p>
    </section>,
  );
}
