/**
 * The headers of every `/ui` response: a Content-Security-Policy with a fresh
 * script nonce, no framing, no caching (the pages show mail, codes and
 * links), and no referrer beyond this origin.
 *
 * The policy allows nothing from another origin and no script but the
 * UI's own files under this response's nonce. A message page relaxes it for
 * the mail's `iframe` only as far as the frame needs: the frame's document
 * comes from `srcdoc`, and a `srcdoc` document is bound by the policy of the
 * page that holds it (on top of the policy in its own `<meta>`), so the mail's
 * inline styles need `'unsafe-inline'` styles on that page, and its remote
 * images need `https:`/`http:` images on that page, which it is given only
 * once the reader asked for them (`?images=shown`).
 */
import { createMiddleware } from "hono/factory";
import { newNonce, NO_STORE } from "../http/security_headers.ts";
import type { UiEnv } from "./context.ts";

/** What a page needs beyond the default policy. */
export interface PagePolicy {
  /** The page holds a mail's HTML in a `srcdoc` frame: its inline styles apply there. */
  mailFrame: boolean;
  /** The reader asked for the mail's remote images. */
  remoteImages: boolean;
}

/** The policy of a page whose nothing is relaxed. */
export const STRICT: PagePolicy = { mailFrame: false, remoteImages: false };

/** The Content-Security-Policy of a `/ui` response with this script nonce. */
export function uiContentSecurityPolicy(nonce: string, page: PagePolicy = STRICT): string {
  return [
    // Nothing unless named below.
    "default-src 'none'",
    // The UI's script files, each under this response's nonce: no inline script, no eval, no other origin.
    `script-src 'nonce-${nonce}'`,
    page.mailFrame ? "style-src 'self' 'unsafe-inline'" : "style-src 'self'",
    // data: for a mail's inline images, which fetch nothing.
    page.remoteImages ? "img-src 'self' data: https: http:" : "img-src 'self' data:",
    // The JSON API and its event stream, on this origin only.
    "connect-src 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "object-src 'none'",
    "base-uri 'none'",
  ].join("; ");
}

/**
 * Sets the nonce for the page (`c.get("nonce")`) and, on the answer, the
 * policy (the page may have relaxed it through `c.set("pagePolicy", ...)`),
 * `X-Frame-Options: DENY` for browsers without `frame-ancestors`,
 * `Cache-Control: no-store` and `Referrer-Policy: same-origin`.
 */
export function uiPolicy() {
  return createMiddleware<UiEnv>(async (c, next) => {
    const nonce = newNonce();
    c.set("nonce", nonce);
    c.set("pagePolicy", STRICT);
    await next();
    c.res.headers.set("Content-Security-Policy", uiContentSecurityPolicy(nonce, c.get("pagePolicy")));
    c.res.headers.set("X-Frame-Options", "DENY");
    c.res.headers.set("Cache-Control", NO_STORE);
    c.res.headers.set("Referrer-Policy", "same-origin");
  });
}
