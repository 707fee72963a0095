/** Static bearer tokens (operator and scraper credentials), compared in constant time. */
import { createMiddleware } from "hono/factory";
import { ApiError } from "../errors.ts";
import { timingSafeEqualText } from "../shared/crypto.ts";

/** The token of an `Authorization: Bearer <token>` header, if the header has that form. */
export function bearerToken(header: string | undefined): string | undefined {
  return /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? "")?.[1];
}

/**
 * 401 UNAUTHORIZED (with `WWW-Authenticate: Bearer realm="<realm>"`) unless
 * the request presents `token`; no check at all when `token` is undefined.
 */
export function requireBearer(token: string | undefined, realm: string) {
  return createMiddleware(async (c, next) => {
    if (token !== undefined) {
      const presented = bearerToken(c.req.header("authorization"));
      // Digests of both sides: the time taken says nothing about the token's length or content.
      if (presented === undefined || !timingSafeEqualText(presented, token)) {
        throw new ApiError(401, "UNAUTHORIZED", "Unauthorized", undefined, {
          "WWW-Authenticate": `Bearer realm="${realm}"`,
        });
      }
    }
    await next();
  });
}
