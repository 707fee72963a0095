/** The Hono environment shared by every route: what middleware puts on the context. */
import type { Plan } from "../accounts/schemas.ts";

/** The caller, once authenticated. */
export interface Principal {
  accountId: string;
  email: string;
  plan: Plan;
  /** The API key used, when the request came with one (not with a session). */
  apiKeyId: string | undefined;
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
