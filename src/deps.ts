/** What the HTTP app needs from the outside world, injected by main.ts or tests. */
import type { Config } from "./config.ts";
import type { Sql } from "./db/client.ts";
import type { Clock } from "./shared/clock.ts";
import type { Metrics } from "./service/metrics.ts";
import type { SecretBox } from "./secrets/secret_box.ts";
import type { Resolver } from "./url_safety/resolver.ts";
import type { DeliveryRuntime } from "./deliveries/runtime.ts";
import type { AuthCache } from "./api_keys/auth_cache.ts";

export interface AppDeps {
  config: Config;
  sql: Sql;
  clock: Clock;
  metrics: Metrics;
  /** Encrypts webhook secrets at rest. */
  secretBox: SecretBox;
  /** Resolves webhook host names (replaced in tests). */
  resolver: Resolver;
  /** The delivery queue and its HTTP client. */
  deliveries: DeliveryRuntime;
  /** Authenticated keys for up to a second (revocations invalidate at once). */
  authCache: AuthCache;
}
