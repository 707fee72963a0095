/**
 * Shared pieces of the fault drills: the scale, the child services' environment,
 * accounts and webhooks made over the HTTP API, events committed from this
 * process (NOTIFY wakes the children), and the figures the drills print.
 *
 * `DRILL_SCALE=short` (the default, what CI runs) keeps every drill small;
 * `DRILL_SCALE=full` (`deno task drill`) runs them at size.
 */
import type { TestDb } from "../_helpers/db.ts";
import { pairKey, pairs, type Receiver } from "../_helpers/receiver.ts";
import { apiAt, createWebhook, newOperatorAccount, type User } from "../_helpers/app.ts";
import type { Committed } from "../_helpers/events.ts";
import { waitUntil } from "../_helpers/wait.ts";

export { pairKey, pairs };
export { sleep, waitUntil } from "../_helpers/wait.ts";

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
export type Account = User;

/** Sends a JSON request and returns status and parsed body; the body is always consumed. */
export async function call(
  url: string,
  method: string,
  path: string,
  opts: { body?: unknown; cookie?: string; bearer?: string } = {},
): Promise<{ status: number; body: unknown }> {
  const res = await apiAt(url).request(path, {
    method,
    ...(opts.body !== undefined ? { json: opts.body } : {}),
    ...(opts.cookie ? { cookie: opts.cookie } : {}),
    ...(opts.bearer ? { auth: opts.bearer } : {}),
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

/** An account made by the operator API of the service at `url`, with `count` webhooks (`inbox.created`) at `target(i)`. */
export async function accountWithWebhooks(
  url: string,
  count: number,
  target: (i: number) => string,
): Promise<{ account: Account; webhooks: string[] }> {
  const api = apiAt(url);
  const account = await newOperatorAccount(api);
  const webhooks: string[] = [];
  for (let i = 0; i < count; i++) webhooks.push(await createWebhook(api, account, target(i)));
  return { account, webhooks };
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

/** Waits until the receiver has seen every (webhook, event) pair; names a few missing ones on a time-out. */
export async function waitAllDelivered(
  receiver: Receiver,
  webhooks: string[],
  events: Committed[],
  timeoutMs: number,
): Promise<void> {
  const expected = webhooks.length * events.length;
  await waitUntil(
    () => deliveredCount(receiver, webhooks, events) === expected,
    timeoutMs,
    () =>
      `${deliveredCount(receiver, webhooks, events)} of ${expected} pairs; missing e.g. ${
        missingPairs(receiver, webhooks, events).join(", ")
      }`,
  );
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
