/** What the `/ui` middleware puts on the context for the pages. */
import type { AppEnv } from "../http/env.ts";
import type { Account, InboxServiceClient } from "../client/mod.ts";
import type { PagePolicy } from "./policy.ts";

/** The signed-in reader of a page: the account, and the API called with their session cookie. */
export interface Reader {
  account: Account;
  api: InboxServiceClient;
}

/** The Hono environment of the UI routes. */
export interface UiEnv extends AppEnv {
  Variables: AppEnv["Variables"] & {
    /** This response's script nonce (src/ui/policy.ts). */
    nonce: string;
    /** How far this page relaxes the policy (a mail's frame). */
    pagePolicy: PagePolicy;
    /** Set for the pages behind the session cookie. */
    reader: Reader;
  };
}
