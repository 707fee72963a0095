/**
 * Shared pieces of the fault drills: the scale, the child services' environment,
 * accounts and webhooks made over the HTTP API, events committed from this
 * process (NOTIFY wakes the children), and the figures the drills print.
 *
 * `DRILL_SCALE=short` (the default, what CI runs) keeps every drill small;
 * `DRILL_SCALE=full` (`deno task drill`) runs them at size.
 */
import type { TestDb } from "../_helpers/db.ts";
import type { Receiver } from "../_helpers/receiver.ts";
import { ADMIN_TOKEN } from "../_helpers/app.ts";
import type { Committed } from "../_helpers/events.ts";

/** How big the drills are. */
export type Scale = "short" | "full";

function readScale(): Scale {
  const value = Deno.env.get("DRILL_SCALE") ?? "short";
  if (value !== "short" && value !== "full") throw new Error(`DRILL_SCALE must be "short" or "full", not "${value}"`);
  return value;
}

export const SCALE: Scale = readScale();

/** `short` or `full` value of a drill parameter. */
export function scaled<T>(short: T, full: T): T {
  return SCALE === "full" ? full : short;
}

/** A signed-in account of the service. */
export interface Account {
  id: string;
  email: string;
  cookie: string;
}

/** Sends a JSON request and returns status and parsed body; the body is always consumed. */
export async function call(
  url: string,
  method: string,
  path: string,
  opts: { body?: unknown; cookie?: string; bearer?: string } = {},
): Promise<{ status: number; body: unknown }> {
  const headers: Record<string, string> = {};
  if (opts.body !== undefined) headers["content-type"] = "application/json";
  if (opts.cookie) headers.cookie = opts.cookie;
  if (opts.bearer) headers.authorization = `Bearer ${opts.bearer}`;
  const res = await fetch(url + path, {
    method,
    headers,
    ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: keep the text.
  }
  return { status: res.status, body };
}

function expect<T>(r: { status: number; body: unknown }, status: number, what: string): T {
  if (r.status !== status) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as T;
}

/** An account on `plan`, made by the operator API, signed in with a session cookie. */
export async function newAccount(url: string, plan: "pro" | "business" = "pro"): Promise<Account> {
  const email = `drill-${crypto.randomUUID()}@example.com`;
  const created = expect<{ id: string }>(
    await call(url, "POST", "/admin/accounts", { body: { email, password: "password123", plan }, bearer: ADMIN_TOKEN }),
    201,
    "create account",
  );
  const login = await fetch(url + "/api/auth/login", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password: "password123" }),
  });
  await login.body?.cancel();
  if (login.status !== 200) throw new Error(`login: ${login.status}`);
  const cookie = login.headers.getSetCookie().find((c) => c.startsWith("session="))?.split(";")[0];
  if (!cookie) throw new Error("login set no session cookie");
  return { id: created.id, email, cookie };
}

/** Registers a webhook for `inbox.created` at `target`; returns its id. */
export async function newWebhook(url: string, account: Account, target: string): Promise<string> {
  const r = await call(url, "POST", "/api/user-webhooks", {
    body: { url: target, events: ["inbox.created"] },
    cookie: account.cookie,
  });
  return expect<{ id: string }>(r, 201, "create webhook").id;
}

/** Creates an API key for the account; returns the full key. */
export async function newApiKey(url: string, account: Account): Promise<string> {
  const r = await call(url, "POST", "/api/api-keys", { body: { name: "drill" }, cookie: account.cookie });
  return expect<{ key: string }>(r, 201, "create API key").key;
}

/** A committed event: its id and when its transaction committed (ms since the epoch). */

/** Key of a (webhook, event) pair as the receiver saw it. */
export function pairKey(webhookId: string, eventId: string): string {
  return `${webhookId} ${eventId}`;
}

/** (webhook, event) pairs the receiver has seen, with how often. */
export function pairs(receiver: Receiver, since = 0): Map<string, number> {
  const seen = new Map<string, number>();
  for (const r of receiver.requests) {
    if (r.receivedAt.getTime() < since) continue;
    const key = pairKey(r.headers["x-webhook-id"] ?? "?", JSON.parse(r.body).id);
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  return seen;
}

/** How many of the expected pairs the receiver has seen. */
export function deliveredCount(receiver: Receiver, webhooks: string[], events: Committed[]): number {
  const seen = pairs(receiver);
  let n = 0;
  for (const w of webhooks) for (const e of events) if (seen.has(pairKey(w, e.id))) n++;
  return n;
}

/** Missing pairs (at most `limit` of them, for a failure message). */
export function missingPairs(receiver: Receiver, webhooks: string[], events: Committed[], limit = 5): string[] {
  const seen = pairs(receiver);
  const out: string[] = [];
  for (const w of webhooks) {
    for (const e of events) {
      if (!seen.has(pairKey(w, e.id))) out.push(pairKey(w, e.id));
      if (out.length >= limit) return out;
    }
  }
  return out;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `condition` every 50 ms until it holds; throws with `what()` after `timeoutMs`. */
export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: () => string | Promise<string>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting: ${await what()}`);
    await sleep(50);
  }
}

/** Delivery rows by status. */
export async function statusCounts(db: TestDb): Promise<Record<string, number>> {
  const rows = await db.sql<{ status: string; n: number }[]>`
    SELECT status, count(*)::int AS n FROM deliveries GROUP BY status ORDER BY status`;
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

/** Waits until every delivery row has succeeded (repeats of killed attempts included). */
export async function waitAllSucceeded(db: TestDb, timeoutMs: number): Promise<void> {
  let counts: Record<string, number> = {};
  await waitUntil(
    async () => {
      counts = await statusCounts(db);
      return Object.keys(counts).every((s) => s === "succeeded");
    },
    timeoutMs,
    () => `delivery rows by status ${JSON.stringify(counts)}`,
  );
}

/** Nearest-rank percentiles of a list of numbers. */
export function percentiles(values: number[]): { n: number; p50: number; p95: number; p99: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] ?? NaN;
  return { n: sorted.length, p50: at(0.5), p95: at(0.95), p99: at(0.99), max: sorted.at(-1) ?? NaN };
}

/** One line of figures, prefixed so the drill output is easy to grep. */
export function report(drill: string, figures: Record<string, unknown>): void {
  const text = Object.entries(figures).map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
    .join(" ");
  console.log(`[drill ${drill}] scale=${SCALE} ${text}`);
}

/** What a stopped service wrote to stderr (warnings and errors), counted by level and message. */
export async function serviceLog(stderr: () => Promise<string>): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const line of (await stderr()).split("\n")) {
    if (!line.trim()) continue;
    let key: string;
    try {
      const entry = JSON.parse(line) as { level?: string; message?: string };
      // Ids differ line by line; without them, lines of one kind count together.
      const message = String(entry.message ?? "").replace(/\b[a-z]{3}_[0-9a-z]{16,}\b/g, "<id>");
      key = `${entry.level ?? "?"}: ${message.slice(0, 100)}`;
    } catch {
      key = `raw: ${line.slice(0, 80)}`;
    }
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}
