/** Static bearer tokens (operator and scraper credentials), compared in constant time. */
import { createMiddleware } from "hono/factory";
import { unauthorized } from "../errors.ts";
import { timingSafeEqualText } from "../shared/crypto.ts";
import { staticTokenHints } from "../auth/hints.ts";

/** The token of an `Authorization: Bearer <token>` header, if the header has that form. */
export function bearerToken(header: string | undefined): string | undefined {
  return /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? "")?.[1];
}

/** Why `header` does not present `token` (the 401's hint), or undefined when it does. */
function tokenRefusal(header: string | undefined, token: string, variable: string): string | undefined {
  const hints = staticTokenHints(variable);
  if (header === undefined) return hints.missing;
  const presented = bearerToken(header);
  if (presented === undefined) return hints.notBearer;
  // Digests of both sides: the time taken says nothing about the token's length or content.
  return timingSafeEqualText(presented, token) ? undefined : hints.wrong;
}

/**
 * 401 UNAUTHORIZED (with `WWW-Authenticate: Bearer realm="<realm>"`, and a
 * hint naming `variable`, the setting that holds the token) unless the
 * request presents `token`; no check at all when `token` is undefined.
 */
export function requireBearer(token: string | undefined, realm: string, variable: string) {
  return createMiddleware(async (c, next) => {
    if (token !== undefined) {
      const refusal = tokenRefusal(c.req.header("authorization"), token, variable);
      if (refusal !== undefined) throw unauthorized(refusal, { "WWW-Authenticate": `Bearer realm="${realm}"` });
    }
    await next();
  });
}
