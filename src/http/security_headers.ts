/**
 * Response headers of the security posture (design): `nosniff` everywhere,
 * `no-store` on the API, and a locked-down policy for the reference page.
 */
import { createMiddleware } from "hono/factory";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "./env.ts";

/** The `Cache-Control` value of every `/api` and `/admin` response. */
export const NO_STORE = "no-store";

/** The documented `Cache-Control: no-store` response header. */
export const NoStoreHeaderSchema = z.literal(NO_STORE);

/** The headers of a response that lists `Cache-Control: no-store` (mail content, events). */
export const NoStoreHeaders = z.object({ "Cache-Control": NoStoreHeaderSchema });

type HeaderSet = readonly (readonly [string, string])[];

/** `X-Content-Type-Options: nosniff`: a browser never runs an answer as another type than it says. */
const EVERYWHERE: HeaderSet = Object.freeze([["X-Content-Type-Options", "nosniff"] as const]);
/** The same, and `Cache-Control: no-store`. */
const NOT_STORED: HeaderSet = Object.freeze([...EVERYWHERE, ["Cache-Control", NO_STORE] as const]);

/** Whether `path` is `prefix` or below it, as Hono matches `<prefix>/*`. */
function under(path: string, prefix: string): boolean {
  return path.startsWith(prefix) && (path.length === prefix.length || path[prefix.length] === "/");
}

/**
 * The posture's response headers, in one middleware mounted on every path
 * (src/app.ts): `nosniff` on every response, and `Cache-Control: no-store`
 * under each of `noStorePrefixes` (`/api`, `/admin`): mail content (codes,
 * magic links, attachments), events, keys, session cookies and webhook
 * delivery logs must never be kept by a browser or proxy cache, and one rule
 * per prefix leaves no new route to forget. Both also on errors and 404s: set
 * on the response after the rest of the chain, so they cover whatever
 * answered (as hono's secureHeaders does: in place, without a copy). The two
 * header sets are built once; one middleware instead of one per header and
 * prefix saves a layer of the chain per request.
 */
export function securityHeaders(noStorePrefixes: readonly string[]) {
  return createMiddleware(async (c, next) => {
    const path = c.req.path;
    const headers = noStorePrefixes.some((prefix) => under(path, prefix)) ? NOT_STORED : EVERYWHERE;
    await next();
    const target = c.res.headers;
    for (const [name, value] of headers) target.set(name, value);
  });
}

/** `Cache-Control: no-store` on the response, errors included, for a route outside the prefixes above. */
export function noStore() {
  return createMiddleware(async (c, next) => {
    await next();
    c.res.headers.set("Cache-Control", NO_STORE);
  });
}

/** A fresh CSP nonce: 128 random bits in base64, one per response that uses it. */
export function newNonce(): string {
  return crypto.getRandomValues(new Uint8Array(16)).toBase64();
}

/** Where the reference page's nonce is kept for the page itself (`c.get(DOCS_NONCE)`). */
export const DOCS_NONCE = "docsNonce" as const satisfies keyof AppEnv["Variables"];

/** The Content-Security-Policy of the reference page, for a script and style nonce. */
export function docsContentSecurityPolicy(nonce: string): string {
  return [
    // Everything from this origin only: the page, Scalar's bundle, the document, "try it" requests.
    "default-src 'self'",
    // Scalar's bundle (its URL) and the page's inline start-up script (the nonce). No 'unsafe-eval':
    // the bundle's one probe for it is switched off (see the prelude in src/service/routes.ts).
    `script-src 'self' 'nonce-${nonce}'`,
    // Scalar injects <style> elements without the nonce and sets `style` attributes while it renders
    // (Chromium reports both under a nonce-only style-src), which only 'unsafe-inline' allows; a
    // nonce next to it would switch 'unsafe-inline' off, so there is none.
    "style-src 'self' 'unsafe-inline'",
    // Scalar's stylesheet draws some controls with data: SVG images.
    "img-src 'self' data:",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/**
 * The reference page's headers: a fresh nonce per request (read by the page
 * through `c.get(DOCS_NONCE)`), the Content-Security-Policy that allows only
 * this origin, and no framing (`frame-ancestors 'none'`, and
 * `X-Frame-Options: DENY` for browsers without CSP level 2).
 */
export function docsPolicy() {
  return createMiddleware<AppEnv>(async (c, next) => {
    const nonce = newNonce();
    c.set(DOCS_NONCE, nonce);
    await next();
    c.res.headers.set("Content-Security-Policy", docsContentSecurityPolicy(nonce));
    c.res.headers.set("X-Frame-Options", "DENY");
  });
}
