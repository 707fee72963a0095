/**
 * The app served over a real loopback port, with helpers that act as a user
 * would: register, get a plan from the operator, create keys and webhooks,
 * call the API. The helpers take any `Api`: an app of this process, or a
 * service process through `apiAt(url)`.
 */
import assert from "node:assert/strict";
import { type Config, loadConfig } from "../../src/config.ts";
import { createApp } from "../../src/app.ts";
import { compose, type Instance } from "../../src/compose.ts";
import type { Clock } from "../../src/shared/clock.ts";
import type { Sql } from "../../src/db/client.ts";
import type { Plan } from "../../src/accounts/schemas.ts";
import type { Resolver } from "../../src/url_safety/resolver.ts";
import type { Json } from "./expect.ts";
import { captureLogs } from "./log_capture.ts";
import { staticResolver } from "./resolver.ts";

/** The CA that signed the test receivers' certificate (tests/_helpers/certs). */
export const TEST_CA_PEM = await Deno.readTextFile(new URL("./certs/ca.pem", import.meta.url));

/** One key for every test instance, so instances sharing a schema read each other's secrets. */
export const TEST_ENCRYPTION_KEY = "q0bHbPAwQzZ2hHkTqV8C7nqvC2oZ6bQjS7n9Xgq2wXo=";

export const ADMIN_TOKEN = "test-admin-token-0123456789";

/** A request as the helpers send it: `json` as the body, `auth` as a bearer token, `cookie` as the Cookie header. */
export type ApiRequestInit = RequestInit & { json?: unknown; auth?: string; cookie?: string };

/** The service's HTTP API at some base URL: an app of this process or a service process. */
export interface Api {
  baseUrl: string;
  request(path: string, init?: ApiRequestInit): Promise<Response>;
}

/** A running app and a small HTTP client for it. */
export interface TestApp extends Api {
  /** The instance's services, composed as start.ts composes them. */
  deps: Instance;
  close(): Promise<void>;
}

/** The value of a gauge or counter without labels on the service's /metrics (NaN when it is not there). */
export async function metricValue(baseUrl: string, name: string): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  return Number(text.split("\n").find((l) => l.startsWith(`${name} `))?.split(" ")[1] ?? NaN);
}

/** The API at `baseUrl` (for instance a service process started by tests/_helpers/process.ts). */
export function apiAt(baseUrl: string): Api {
  return {
    baseUrl,
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
  };
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
    /** Listen for other instances' notifications: key revocations, queued deliveries (needs PostgreSQL). */
    listen?: boolean;
    random?: () => number;
  } = {},
): Promise<TestApp> {
  await captureLogs();
  const deps = await compose({
    config: opts.config ?? testConfig(opts.env),
    sql,
    encryptionKey: TEST_ENCRYPTION_KEY,
    listen: opts.listen ?? false,
    // No DNS in tests: names resolve only where a test says so.
    resolver: opts.resolver ?? staticResolver({}),
    caPem: TEST_CA_PEM,
    ...(opts.clock ? { clock: opts.clock } : {}),
    ...(opts.random ? { random: opts.random } : {}),
  });
  await deps.start({ deliveries: opts.startDeliveries ?? false });
  const app = createApp(deps);
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app.fetch);
  let closed: Promise<void> | undefined;
  return {
    ...apiAt(`http://127.0.0.1:${server.addr.port}`),
    deps,
    // Once only: a test may stop an instance early (a restart) that its harness closes again.
    close: () =>
      closed ??= (async () => {
        deps.release();
        await server.shutdown();
        await deps.stop();
      })(),
  };
}

/** A signed-in user of some plan: their account id and session cookie. */
export interface User {
  id: string;
  email: string;
  cookie: string;
}

/** Who a request is made as: a user, or a bare `session=...` cookie. */
export type Session = User | string;

function cookieOf(who: Session): string {
  return typeof who === "string" ? who : who.cookie;
}

/** Asserts the response has `status` (the body in the message otherwise); returns the JSON body. */
async function expectStatus<T>(res: Response, status: number, what: string): Promise<T> {
  const text = await res.text();
  assert.equal(res.status, status, `${what}: ${text}`);
  return JSON.parse(text) as T;
}

let userCounter = 0;

/** Registers a user over HTTP, sets the plan through the operator API, and returns the session. */
export async function newUser(app: Api, plan: Plan = "pro"): Promise<User> {
  const email = `user${++userCounter}-${crypto.randomUUID().slice(0, 8)}@example.com`;
  const res = await app.request("/api/auth/register", { method: "POST", json: { email, password: "correct horse" } });
  const { id } = await expectStatus<{ id: string }>(res, 201, "register");
  const cookie = sessionCookieOf(res);
  if (plan !== "free") await setPlan(app, id, plan);
  return { id, email, cookie };
}

/** Sets an account's plan through the operator API (`PATCH /admin/accounts/{id}`). */
export async function setPlan(app: Api, accountId: string, plan: Plan): Promise<void> {
  const up = await app.request(`/admin/accounts/${accountId}`, { method: "PATCH", json: { plan }, auth: ADMIN_TOKEN });
  await expectStatus(up, 200, "plan change");
}

/**
 * An account made by the operator API (`POST /admin/accounts`, as a
 * deployment's operator makes them), then signed in through the login endpoint.
 */
export async function newOperatorAccount(app: Api, plan: Plan = "pro"): Promise<User> {
  const email = `op-${crypto.randomUUID()}@example.com`;
  const password = "password123";
  const created = await app.request("/admin/accounts", {
    method: "POST",
    json: { email, password, plan },
    auth: ADMIN_TOKEN,
  });
  const { id } = await expectStatus<{ id: string }>(created, 201, "create account");
  const login = await app.request("/api/auth/login", { method: "POST", json: { email, password } });
  await expectStatus(login, 200, "login");
  return { id, email, cookie: sessionCookieOf(login) };
}

/** The `session=...` pair from a response's Set-Cookie. */
export function sessionCookieOf(res: Response): string {
  return sessionSetCookieOf(res).split(";")[0]!;
}

/** The whole Set-Cookie header of the session cookie, attributes included; asserts there is one. */
export function sessionSetCookieOf(res: Response): string {
  const header = res.headers.getSetCookie().find((c) => c.startsWith("session="));
  assert.ok(header, "expected a session Set-Cookie");
  return header;
}

/** GET `path` with the session; returns the status and the JSON body. */
export async function getJson(app: Api, who: Session, path: string): Promise<{ status: number; json: Json }> {
  const res = await app.request(path, { cookie: cookieOf(who) });
  return { status: res.status, json: await res.json() };
}

/** Creates an API key with the session; returns the full key and its id. */
export async function newApiKey(app: Api, who: Session, name = "ci"): Promise<{ id: string; key: string }> {
  const res = await app.request("/api/api-keys", { method: "POST", json: { name }, cookie: cookieOf(who) });
  const body = await expectStatus<{ id: string; key: string }>(res, 201, "key creation");
  return { id: body.id, key: body.key };
}

/** Registers a webhook with the session (default event `inbox.created`, no secret); returns its id. */
export async function createWebhook(
  app: Api,
  who: Session,
  url: string,
  events: string[] = ["inbox.created"],
  secret?: string,
): Promise<string> {
  return (await createWebhookWith(app, who, { url, events, ...(secret === undefined ? {} : { secret }) })).id;
}

/** Registers a webhook from the whole request body (`url`, `events`, `secret`...); asserts a 201 and returns its body. */
export async function createWebhookWith(
  app: Api,
  who: Session,
  json: Json & { url: string },
): Promise<Json & { id: string }> {
  const res = await app.request("/api/user-webhooks", { method: "POST", json, cookie: cookieOf(who) });
  return await expectStatus<Json & { id: string }>(res, 201, `webhook creation for ${json.url}`);
}
