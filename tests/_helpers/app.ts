/**
 * The app served over a real loopback port, with helpers that act as a user
 * would: register, get a plan from the operator, create keys, call the API.
 */
import { type Config, loadConfig } from "../../src/config.ts";
import { createApp } from "../../src/app.ts";
import { createMetrics } from "../../src/service/metrics.ts";
import { type Clock, systemClock } from "../../src/shared/clock.ts";
import type { Sql } from "../../src/db/client.ts";
import type { AppDeps } from "../../src/deps.ts";
import type { Plan } from "../../src/accounts/schemas.ts";
import { captureLogs } from "./log_capture.ts";
import { createSecretBox } from "../../src/secrets/secret_box.ts";
import { type Resolver, staticResolver } from "../../src/url_safety/resolver.ts";
import { createDeliveryRuntime } from "../../src/deliveries/runtime.ts";
import { AUTH_CHANNEL, AuthCache } from "../../src/api_keys/auth_cache.ts";

/** The CA that signed the test receivers' certificate (tests/_helpers/certs). */
export const TEST_CA_PEM = await Deno.readTextFile(new URL("./certs/ca.pem", import.meta.url));

/** One key for every test instance, so instances sharing a schema read each other's secrets. */
export const TEST_ENCRYPTION_KEY = "q0bHbPAwQzZ2hHkTqV8C7nqvC2oZ6bQjS7n9Xgq2wXo=";

export const ADMIN_TOKEN = "test-admin-token-0123456789";

/** A running app and a small HTTP client for it. */
export interface TestApp {
  baseUrl: string;
  deps: AppDeps;
  request(path: string, init?: RequestInit & { json?: unknown; auth?: string; cookie?: string }): Promise<Response>;
  close(): Promise<void>;
}

/** Test configuration: the defaults plus the admin token, overridable per test. */
export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({ ADMIN_TOKEN, COOKIE_SECURE: "false", LOG_LEVEL: "debug", ...env });
}

/** Serves a new app instance on 127.0.0.1 and a random port. */
export async function startApp(
  sql: Sql,
  opts: {
    clock?: Clock;
    config?: Config;
    env?: Record<string, string>;
    resolver?: Resolver;
    /** Start the delivery queue (claims on wake-ups); otherwise tests drive it with runOnce/drain. */
    startDeliveries?: boolean;
    /** Listen for other instances' key revocations (needs a live database). */
    listen?: boolean;
    random?: () => number;
  } = {},
): Promise<TestApp> {
  await captureLogs();
  const config = opts.config ?? testConfig(opts.env);
  const clock = opts.clock ?? systemClock;
  const metrics = createMetrics();
  const secretBox = await createSecretBox(TEST_ENCRYPTION_KEY);
  // No DNS in tests: names resolve only where a test says so.
  const resolver = opts.resolver ?? staticResolver({});
  const deliveries = createDeliveryRuntime({
    sql,
    clock,
    config,
    secretBox,
    resolver,
    metrics,
    caPem: TEST_CA_PEM,
    ...(opts.random ? { random: opts.random } : {}),
  });
  if (opts.startDeliveries) await deliveries.start(false);
  const authCache = new AuthCache();
  const subscription = opts.listen
    ? await sql.listen(AUTH_CHANNEL, (keyId) => authCache.invalidateKey(keyId))
    : undefined;
  const deps: AppDeps = { config, sql, clock, metrics, secretBox, resolver, deliveries, authCache };
  const app = createApp(deps);
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app.fetch);
  const baseUrl = `http://127.0.0.1:${server.addr.port}`;
  return {
    baseUrl,
    deps,
    request: (path, init = {}) => {
      const { json, auth, cookie, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (json !== undefined) headers.set("content-type", "application/json");
      if (auth) headers.set("authorization", `Bearer ${auth}`);
      if (cookie) headers.set("cookie", cookie);
      return fetch(baseUrl + path, {
        ...rest,
        headers,
        body: json !== undefined ? JSON.stringify(json) : rest.body,
      });
    },
    close: async () => {
      await server.shutdown();
      await deliveries.stop();
      await subscription?.unlisten();
    },
  };
}

/** A signed-in user of some plan: their account id and session cookie. */
export interface User {
  id: string;
  email: string;
  cookie: string;
}

let userCounter = 0;

/** Registers a user over HTTP, sets the plan through the operator API, and returns the session. */
export async function newUser(app: TestApp, plan: Plan = "pro"): Promise<User> {
  const email = `user${++userCounter}-${crypto.randomUUID().slice(0, 8)}@example.com`;
  const res = await app.request("/api/auth/register", { method: "POST", json: { email, password: "correct horse" } });
  if (res.status !== 201) throw new Error(`register failed: ${res.status} ${await res.text()}`);
  const { id } = await res.json();
  const cookie = sessionCookieOf(res);
  if (plan !== "free") {
    const up = await app.request(`/admin/accounts/${id}`, { method: "PATCH", json: { plan }, auth: ADMIN_TOKEN });
    if (up.status !== 200) throw new Error(`plan change failed: ${up.status} ${await up.text()}`);
  }
  return { id, email, cookie };
}

/** The `session=...` pair from a response's Set-Cookie. */
export function sessionCookieOf(res: Response): string {
  const header = res.headers.getSetCookie().find((c) => c.startsWith("session="));
  if (!header) throw new Error("no session cookie");
  return header.split(";")[0]!;
}

/** Creates an API key with the user's session; returns the full key and its id. */
export async function newApiKey(app: TestApp, user: User, name = "ci"): Promise<{ id: string; key: string }> {
  const res = await app.request("/api/api-keys", { method: "POST", json: { name }, cookie: user.cookie });
  if (res.status !== 201) throw new Error(`key creation failed: ${res.status} ${await res.text()}`);
  const body = await res.json();
  return { id: body.id, key: body.key };
}
