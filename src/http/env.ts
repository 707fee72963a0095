/** The Hono environment shared by every route: what middleware puts on the context. */
import type { Plan } from "../accounts/schemas.ts";
import type { Credential } from "../auth/revocations.ts";
import type { Scope } from "../auth/scopes.ts";

/** The caller, once authenticated. */
export interface Principal {
  accountId: string;
  email: string;
  plan: Plan;
  /** The API key used, when the request came with one (not with a session). */
  apiKeyId: string | undefined;
  /** The key or session the request came with: requests that stay open end when it is revoked or expires. */
  credential: Credential;
  /** What the credential may do (auth/scopes.ts): every scope for a session and an unscoped key. */
  scopes: readonly Scope[];
  /** The inboxes it reaches: null for all of the account's. */
  inboxIds: readonly string[] | null;
}

export interface AppEnv {
  Variables: {
    requestId: string;
    principal: Principal;
    /** Set by the not-found handler: no route answered (the metrics' `unmatched` route). */
    unmatched: boolean;
    /** The reference page's CSP nonce, for its inline script and style (src/http/security_headers.ts). */
    docsNonce: string;
  };
}

/** The app's own request handler, as `Deno.serve` calls it (the request and the connection details). */
export type AppFetch = (request: Request, env: unknown) => Response | Promise<Response>;
