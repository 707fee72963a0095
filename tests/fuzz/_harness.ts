/**
 * The fuzzing harness: an app over real HTTP on a fresh schema with a
 * principal of every plan and objects for them to reach, a request model that
 * prints readably, and the one check every response must pass.
 */
import fc from "npm:fast-check@4.10.2";
import type { TestDb } from "../_helpers/db.ts";
import { ADMIN_TOKEN, createWebhook, newApiKey, newUser, type TestApp, type User } from "../_helpers/app.ts";
import type { ManualClock } from "../_helpers/clock.ts";
import { startHarness } from "../_helpers/harness.ts";
import { startSession } from "../../src/auth/service.ts";
import { createReceiver } from "../../src/messages/receive.ts";
import { prepareMessage } from "../../src/messages/prepare.ts";
import { isIpLiteral } from "../../src/url_safety/address.ts";
import type { Sql } from "../../src/db/client.ts";
import { DOCUMENTED_CODES, type Operation, resolveOperation, UNMATCHED_ALLOWED } from "./_spec.ts";

/** Runs per property: 60 in CI, more with FUZZ_RUNS (the drill uses 2000). */
export const RUNS = Number(Deno.env.get("FUZZ_RUNS") ?? 60);

/**
 * The seed: fixed by default so CI is reproducible, `FUZZ_SEED=<n>` to replay
 * a reported failure, `FUZZ_SEED=random` to explore new ground.
 */
export const SEED: number | undefined = (() => {
  const given = Deno.env.get("FUZZ_SEED");
  if (given === "random") return undefined;
  return given === undefined ? 20260101 : Number(given);
})();

/** fast-check parameters shared by every property; `examples` run first, before the random cases. */
export function fuzzParams<T>(examples: T[] = []): fc.Parameters<[T]> {
  return {
    numRuns: RUNS,
    ...(SEED === undefined ? {} : { seed: SEED }),
    examples: examples.map((e): [T] => [e]),
  };
}

const REQUEST_TIMEOUT_MS = 15_000;
const EXCERPT = 400;

export type PrincipalName =
  | "anonymous"
  | "free-session"
  | "pro-session"
  | "business-session"
  | "pro-key"
  | "business-key"
  | "admin-token";

export const PRINCIPALS: readonly PrincipalName[] = [
  "anonymous",
  "free-session",
  "pro-session",
  "business-session",
  "pro-key",
  "business-key",
  "admin-token",
];

/** A byte-exact JSON fragment (`1e309`, `-0`, deep nesting) placed as is inside a JSON body. */
export class Raw {
  constructor(readonly text: string) {}
}

/** An object as ordered entries, so a body can repeat a key or carry `__proto__` as data. */
export class Entries {
  constructor(readonly entries: ReadonlyArray<readonly [string, unknown]>) {}
}

/** JSON text of a value that may hold `Raw` and `Entries` parts. */
export function toJsonText(value: unknown): string {
  if (value instanceof Raw) return value.text;
  if (value instanceof Entries) {
    return `{${value.entries.map(([k, v]) => `${JSON.stringify(k)}:${toJsonText(v)}`).join(",")}}`;
  }
  if (Array.isArray(value)) return `[${value.map(toJsonText).join(",")}]`;
  if (value !== null && typeof value === "object") {
    // Own keys, `__proto__` included when it is an own data property.
    const keys = Object.getOwnPropertyNames(value);
    const rec = value as Record<string, unknown>;
    return `{${keys.map((k) => `${JSON.stringify(k)}:${toJsonText(rec[k])}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** What a request carries as its body. */
export type Body =
  | { kind: "none" }
  | { kind: "json"; value: unknown }
  | { kind: "text"; text: string }
  | { kind: "bytes"; bytes: Uint8Array };

/**
 * A session cookie is named, not spelled out: it is resolved when the request
 * is sent, so a request that reaches logout ends a session minted for it and
 * never the principal's own.
 */
export type CookiePart = { session: PrincipalName } | { raw: string };

/** One generated request. */
export interface Case {
  method: string;
  /** Path and query as sent (before the URL parser normalises it). */
  path: string;
  principal: PrincipalName;
  /** Replaces the principal's Authorization header (`null`: send none). */
  authorization?: string | null;
  /** Replaces the principal's cookie header. */
  cookie?: CookiePart[];
  /** Extra headers, appended in order (a repeated name is sent twice). */
  headers: Array<[string, string]>;
  body: Body;
  /** Milliseconds the service clock moves before the request (rate windows, expiry). */
  waitMs: number;
}

function excerpt(text: string, max = EXCERPT): string {
  const clean = JSON.stringify(text).slice(1, -1);
  return clean.length <= max ? clean : `${clean.slice(0, max)}… (${text.length} chars)`;
}

function bodyText(body: Body): string {
  switch (body.kind) {
    case "none":
      return "(none)";
    case "json":
      return excerpt(toJsonText(body.value));
    case "text":
      return `text ${excerpt(body.text)}`;
    case "bytes":
      return `bytes [${[...body.bytes.slice(0, 48)].join(",")}${
        body.bytes.length > 48 ? ",…" : ""
      }] (${body.bytes.length} bytes)`;
  }
}

/** A case as a few readable lines (used by fast-check's report and by failures). */
export function describeCase(c: Case): string {
  const lines = [`${c.method} ${excerpt(c.path, 300)} as ${c.principal}${c.waitMs ? ` after ${c.waitMs} ms` : ""}`];
  if (c.authorization !== undefined) {
    lines.push(`  authorization: ${c.authorization === null ? "(none)" : excerpt(c.authorization, 200)}`);
  }
  if (c.cookie !== undefined) {
    const parts = c.cookie.map((p) => "session" in p ? `session=<live session of ${p.session}>` : excerpt(p.raw, 200));
    lines.push(`  cookie: ${parts.join("; ") || "(none)"}`);
  }
  for (const [name, value] of c.headers) lines.push(`  ${name}: ${excerpt(value, 200)}`);
  lines.push(`  body: ${bodyText(c.body)}`);
  return lines.join("\n");
}

/** Gives a case fast-check's custom rendering, so counterexamples read as requests. */
export function printable(c: Case): Case {
  Object.defineProperty(c, fc.toStringMethod, { value: () => `\n${describeCase(c)}\n`, enumerable: false });
  return c;
}

/** A principal's credentials and the objects it owns. */
export interface Owned {
  user: User;
  key: string;
  webhookIds: string[];
  inboxIds: string[];
  /** Messages as [inboxId, messageId]. */
  messageIds: Array<[string, string]>;
  /** Attachments as [messageId, attachmentId]. */
  attachmentIds: Array<[string, string]>;
  deliveries: Array<{ id: string; webhookId: string }>;
  /** Keys that can be revoked without locking the principal out. */
  spareKeyIds: string[];
}

/** Ids the fuzzer picks "valid" path ids from. */
export interface IdPool {
  /** Deliveries of each webhook and messages of each inbox, so a child id can match its parent. */
  children: Map<string, string[]>;
  webhooks: string[];
  inboxes: string[];
  messages: string[];
  attachments: string[];
  deliveries: string[];
  apiKeys: string[];
  /** Accounts the admin API may change (never a principal's: a plan change would alter later runs). */
  accounts: string[];
  /** Emails of existing accounts whose password is `PASSWORD`. */
  emails: string[];
}

export const PASSWORD = "correct horse";

/** Per-status tallies, printed after a property so a run shows what it reached. */
export type Tally = Map<string, number>;

/** The running app, its database and everything the properties need. */
export interface Fixture {
  app: TestApp;
  db: TestDb;
  sql: Sql;
  clock: ManualClock;
  users: Record<"free" | "pro" | "business", User>;
  owned: Record<"pro" | "business" | "victim", Owned>;
  keys: Record<"pro" | "business", string>;
  pool: IdPool;
  /** Sends one case and checks every invariant; throws a readable error on a violation. */
  check(c: Case, tally?: Tally): Promise<void>;
  close(): Promise<void>;
}

async function seedOwned(app: TestApp, user: User, tag: string): Promise<Owned> {
  const { key } = await newApiKey(app, user, `${tag}-principal`);
  const spareKeyIds: string[] = [];
  for (let i = 0; i < 2; i++) spareKeyIds.push((await newApiKey(app, user, `${tag}-spare-${i}`)).id);
  const webhookIds: string[] = [];
  for (let i = 0; i < 2; i++) {
    webhookIds.push(
      await createWebhook(
        app,
        user,
        `https://hooks-${tag}-${i}.example.com/inbox`,
        ["inbox.created", "message.received", "inbox.expired"],
        "fuzz-secret-0123456789",
      ),
    );
  }
  const inboxIds: string[] = [];
  const messageIds: Array<[string, string]> = [];
  for (let i = 0; i < 2; i++) {
    const res = await app.request("/api/inboxes", {
      method: "POST",
      cookie: user.cookie,
      json: { localPart: `seed-${tag}-${i}`, ttlSeconds: 604_800 },
    });
    const json = await res.json();
    if (res.status !== 201) throw new Error(`seed inbox: ${res.status} ${JSON.stringify(json)}`);
    inboxIds.push(json.id);
    const [got] = await createReceiver(app.deps).receive({
      addresses: [json.address],
      message: prepareMessage({
        from: "sender@example.org",
        subject: `hello ${tag} ${i}`,
        text: "body",
        html: null,
        headers: { subject: `hello ${tag} ${i}` },
        attachments: [{ filename: "a.txt", contentType: "text/plain", content: new TextEncoder().encode("a") }],
        raw: new TextEncoder().encode(`Subject: hello ${tag} ${i}\r\n\r\nbody\r\n`),
      }),
    });
    if (!got) throw new Error("seed message was not stored");
    messageIds.push([got.inboxId, got.messageId]);
  }
  const rows = await app.deps.sql<{ id: string; webhookId: string }[]>`
    SELECT id, webhook_id FROM deliveries WHERE webhook_id IN ${app.deps.sql(webhookIds)} ORDER BY id`;
  const attachmentRows = await app.deps.sql<{ messageId: string; id: string }[]>`
    SELECT message_id, id FROM attachments WHERE message_id IN ${app.deps.sql(messageIds.map(([, m]) => m))}`;
  const attachmentIds = attachmentRows.map((a): [string, string] => [a.messageId, a.id]);
  return { user, key, webhookIds, inboxIds, messageIds, attachmentIds, deliveries: rows, spareKeyIds };
}

async function adminAccount(app: TestApp, email: string, plan: string): Promise<string> {
  const res = await app.request("/admin/accounts", {
    method: "POST",
    auth: ADMIN_TOKEN,
    json: { email, password: PASSWORD, plan },
  });
  const json = await res.json();
  if (res.status !== 201) throw new Error(`admin account: ${res.status} ${JSON.stringify(json)}`);
  return json.id;
}

/** Tables a refused request must leave as they were, with the key that orders each. */
const SNAPSHOT_TABLES: Array<[table: string, key: string]> = [
  ["accounts", "id"],
  ["sessions", "token_hash"],
  ["api_keys", "id"],
  ["webhooks", "id"],
  ["inboxes", "id"],
  ["messages", "id"],
  ["events", "id"],
  ["deliveries", "id"],
];

/**
 * Count and hash of every table, computed in SQL. Left out: `rate_limit_hits`
 * (every request counts, by design) and `api_keys.last_used_at`, which
 * authenticating with a key sets (at most once a minute) whatever the request
 * then turns out to be (design: "lastUsedAt ... set on first use").
 */
export async function snapshot(sql: Sql): Promise<string> {
  const parts = SNAPSHOT_TABLES.map(([table, key]) =>
    `SELECT '${table}' AS t, count(*)::int AS n,
       coalesce(md5(string_agg((to_jsonb(x) - 'last_used_at')::text, ',' ORDER BY x.${key})), '') AS h
     FROM ${table} x`
  );
  const rows = await sql.unsafe<{ t: string; n: number; h: string }[]>(parts.join(" UNION ALL "));
  return rows.map((r) => `${r.t}:${r.n}:${r.h}`).join(" ");
}

/** Method as fetch sends it: the six standard names are upper-cased, anything else goes as written. */
export function normaliseMethod(method: string): string {
  const upper = method.toUpperCase();
  return ["DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT"].includes(upper) ? upper : method;
}

const ERROR_KEYS = new Set(["success", "error", "code", "details", "hint"]);

/** Why a 4xx body is not the documented error body, or undefined when it is. */
export function errorBodyProblem(text: string): string | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return "error body is not JSON";
  }
  if (body === null || typeof body !== "object" || Array.isArray(body)) return "error body is not an object";
  const b = body as Record<string, unknown>;
  const extra = Object.keys(b).filter((k) => !ERROR_KEYS.has(k));
  if (extra.length > 0) return `error body has extra keys ${JSON.stringify(extra)}`;
  if (b.success !== false) return "error body: success is not false";
  if (typeof b.error !== "string" || b.error === "") return "error body: error is not a non-empty string";
  if (typeof b.code !== "string" || !/^[A-Z][A-Z0-9_]*$/.test(b.code)) return "error body: code is not UPPER_SNAKE";
  if (!DOCUMENTED_CODES.has(b.code)) return `error body: code ${b.code} is not one openapi.yaml documents`;
  if ("hint" in b && (typeof b.hint !== "string" || b.hint === "")) return "error body: hint is not a non-empty string";
  if ("details" in b) {
    if (!Array.isArray(b.details)) return "error body: details is not an array";
    for (const d of b.details as unknown[]) {
      if (d === null || typeof d !== "object" || Array.isArray(d)) return "error body: a detail is not an object";
      const keys = Object.keys(d).sort().join(",");
      const rec = d as Record<string, unknown>;
      if (keys !== "message,path" || typeof rec.path !== "string" || typeof rec.message !== "string") {
        return `error body: detail ${JSON.stringify(d)} is not {path, message}`;
      }
    }
  }
  return undefined;
}

/** Builds the fixture: app, principals of each plan, and objects to aim at. */
export async function startFixture(): Promise<Fixture> {
  const harness = await startHarness();
  const { app, db, clock } = harness;
  try {
    const users = {
      free: await newUser(app, "free"),
      pro: await newUser(app, "pro"),
      business: await newUser(app, "business"),
    };
    const victim = await newUser(app, "pro");
    const owned = {
      pro: await seedOwned(app, users.pro, "pro"),
      business: await seedOwned(app, users.business, "business"),
      victim: await seedOwned(app, victim, "victim"),
    };
    const spareAccounts = [
      await adminAccount(app, "spare-free@example.com", "free"),
      await adminAccount(app, "spare-pro@example.com", "pro"),
    ];
    const all = Object.values(owned);
    const children = new Map<string, string[]>();
    const adopt = (parent: string, child: string) => children.set(parent, [...children.get(parent) ?? [], child]);
    for (const o of all) {
      for (const [inbox, message] of o.messageIds) adopt(inbox, message);
      for (const [message, attachment] of o.attachmentIds) adopt(message, attachment);
      for (const d of o.deliveries) adopt(d.webhookId, d.id);
    }
    const pool: IdPool = {
      children,
      webhooks: all.flatMap((o) => o.webhookIds),
      inboxes: all.flatMap((o) => o.inboxIds),
      messages: all.flatMap((o) => o.messageIds.map(([, m]) => m)),
      attachments: all.flatMap((o) => o.attachmentIds.map(([, a]) => a)),
      deliveries: all.flatMap((o) => o.deliveries.map((d) => d.id)),
      apiKeys: all.flatMap((o) => o.spareKeyIds),
      accounts: [...spareAccounts, victim.id],
      emails: [users.free.email, users.pro.email, users.business.email, "spare-pro@example.com"],
    };
    const keys = { pro: owned.pro.key, business: owned.business.key };
    const fixture: Fixture = {
      app,
      db,
      sql: db.sql,
      clock,
      users,
      owned,
      keys,
      pool,
      check: (c, tally) => checkCase(fixture, c, tally),
      close: harness.close,
    };
    return fixture;
  } catch (err) {
    await harness.close();
    throw err;
  }
}

/** The objects a principal owns: its own for pro and business, someone else's for the rest. */
export function ownedBy(fx: Fixture, p: PrincipalName): Owned {
  if (p === "pro-session" || p === "pro-key") return fx.owned.pro;
  if (p === "business-session" || p === "business-key") return fx.owned.business;
  return fx.owned.victim;
}

function principalAccount(fx: Fixture, p: PrincipalName): string | undefined {
  switch (p) {
    case "free-session":
      return fx.users.free.id;
    case "pro-session":
      return fx.users.pro.id;
    case "business-session":
      return fx.users.business.id;
    default:
      return undefined;
  }
}

function principalCookie(fx: Fixture, p: PrincipalName): string | undefined {
  switch (p) {
    case "free-session":
      return fx.users.free.cookie;
    case "pro-session":
      return fx.users.pro.cookie;
    case "business-session":
      return fx.users.business.cookie;
    default:
      return undefined;
  }
}

function principalAuthorization(fx: Fixture, p: PrincipalName): string | undefined {
  switch (p) {
    case "pro-key":
      return `Bearer ${fx.keys.pro}`;
    case "business-key":
      return `Bearer ${fx.keys.business}`;
    case "admin-token":
      return `Bearer ${ADMIN_TOKEN}`;
    default:
      return undefined;
  }
}

/** The cookie header of a case; on logout, sessions are fresh ones so the principals stay signed in. */
async function cookieHeader(fx: Fixture, c: Case, reachesLogout: boolean): Promise<string | undefined> {
  const parts = c.cookie ?? (principalCookie(fx, c.principal) ? [{ session: c.principal }] : []);
  const out: string[] = [];
  for (const part of parts) {
    if ("raw" in part) {
      out.push(part.raw);
      continue;
    }
    const account = principalAccount(fx, part.session);
    if (!account) continue;
    if (reachesLogout) out.push(`session=${await startSession(fx.sql, fx.clock, account, 30)}`);
    else out.push(principalCookie(fx, part.session)!);
  }
  return out.length > 0 ? out.join("; ") : undefined;
}

function encodeBody(body: Body): Uint8Array | undefined {
  switch (body.kind) {
    case "none":
      return undefined;
    case "json":
      return new TextEncoder().encode(toJsonText(body.value));
    case "text":
      return new TextEncoder().encode(body.text);
    case "bytes":
      return body.bytes;
  }
}

/**
 * A test-delivery request sends a real HTTPS request to the webhook's host.
 * The generators only make hosts that do not resolve here or are refused,
 * so nothing leaves the machine; this guard makes sure of it.
 */
async function guardOutboundTest(fx: Fixture, pathname: string): Promise<void> {
  const m = /^\/api\/user-webhooks\/([^/]+)\/test$/.exec(pathname);
  if (!m) return;
  const rows = await fx.sql<{ url: string }[]>`SELECT url FROM webhooks`;
  for (const { url } of rows) {
    if (isIpLiteral(new URL(url).hostname)) {
      throw new Error(`refusing to fuzz the test endpoint while a webhook targets an IP literal: ${url}`);
    }
  }
}

interface Outcome {
  status: number;
  text: string;
  headers: Headers;
}

async function send(fx: Fixture, c: Case, cookie: string | undefined, url: URL): Promise<Outcome> {
  const headers = new Headers();
  const authorization = c.authorization === undefined ? principalAuthorization(fx, c.principal) : c.authorization;
  if (authorization !== undefined && authorization !== null) headers.set("authorization", authorization);
  if (cookie !== undefined) headers.set("cookie", cookie);
  for (const [name, value] of c.headers) headers.append(name, value);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), REQUEST_TIMEOUT_MS);
  try {
    const body = encodeBody(c.body);
    const res = await fetch(url, {
      method: c.method,
      headers,
      signal: controller.signal,
      ...(body === undefined ? {} : { body: body as Uint8Array<ArrayBuffer> }),
    });
    // An event stream never ends by itself: its status and headers are the answer.
    if (res.headers.get("content-type")?.startsWith("text/event-stream")) {
      await res.body?.cancel();
      return { status: res.status, text: "", headers: res.headers };
    }
    const text = await res.text();
    return { status: res.status, text, headers: res.headers };
  } catch (err) {
    if (controller.signal.aborted) throw new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms (hang)`);
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

function fail(c: Case, out: Outcome, op: Operation | undefined, problem: string): never {
  const opName = op ? `${op.id} (${op.method} ${op.template})` : "no operation (unmatched route)";
  throw new Error(
    `${problem}\n${describeCase(c)}\n  reaches: ${opName}\n  → ${out.status} ${excerpt(out.text, 600)}`,
  );
}

const MUTATING = (method: string) => method !== "GET" && method !== "HEAD";

/** Operations whose success body is not JSON. */
const BYTE_OPERATIONS = new Set(["getRawMessage", "getAttachment", "streamEvents"]);

async function checkCase(fx: Fixture, c: Case, tally?: Tally): Promise<void> {
  if (c.waitMs > 0) fx.clock.advance(c.waitMs);
  const url = new URL(c.path, fx.app.baseUrl);
  const method = normaliseMethod(c.method);
  const op = resolveOperation(method, url.pathname);
  await guardOutboundTest(fx, url.pathname);
  const mutating = MUTATING(method);
  // Before the snapshot: a logout gets a fresh session, which is the test's own write, not the request's.
  const cookie = await cookieHeader(fx, c, op?.id === "logout");
  const before = mutating ? await snapshot(fx.sql) : "";
  const out = await send(fx, c, cookie, url);
  const key = `${op?.id ?? "unmatched"} ${out.status}`;
  tally?.set(key, (tally.get(key) ?? 0) + 1);

  const readyz503 = op?.id === "ready" && out.status === 503;
  if (out.status >= 500 && !readyz503) fail(c, out, op, `server error ${out.status}`);
  const allowed = op ? op.allowed : UNMATCHED_ALLOWED;
  if (!allowed.has(out.status)) {
    fail(c, out, op, `status ${out.status} is not documented here (allowed: ${[...allowed].sort().join(", ")})`);
  }
  if (out.status >= 400 && out.status < 500) {
    const problem = errorBodyProblem(out.text);
    if (problem) fail(c, out, op, problem);
    if (out.status === 429 && !/^\d+$/.test(out.headers.get("retry-after") ?? "")) {
      fail(c, out, op, "429 without an integer Retry-After");
    }
    if (mutating) {
      const after = await snapshot(fx.sql);
      if (after !== before) fail(c, out, op, `refused request changed data:\n  before ${before}\n  after  ${after}`);
    }
  }
  if (out.status === 204 && out.text !== "") fail(c, out, op, "204 with a body");
  // JSON wherever the answer says it is; the raw message and attachments are bytes of their own type.
  const json = (out.headers.get("content-type") ?? "").startsWith("application/json");
  const bytes = op !== undefined && BYTE_OPERATIONS.has(op.id);
  if (out.status >= 200 && out.status < 300 && out.status !== 204 && (json || !bytes)) {
    try {
      JSON.parse(out.text);
    } catch {
      fail(c, out, op, "2xx body is not JSON");
    }
  }
}

/** Prints what a property reached: operation and status counts. */
export function printTally(name: string, tally: Tally): void {
  const entries = [...tally.entries()].sort(([a], [b]) => a.localeCompare(b));
  console.log(`${name}: ${entries.map(([k, n]) => `${k}×${n}`).join(", ")}`);
}
