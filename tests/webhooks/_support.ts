/** Shared helpers of the webhook tests: an app on a fresh schema, and small request helpers. */
import assert from "node:assert/strict";
import { createTestDb, type TestDb } from "../_helpers/db.ts";
import { startApp, type TestApp, type User } from "../_helpers/app.ts";
import { ManualClock } from "../../src/shared/clock.ts";
import type { Resolver } from "../../src/url_safety/resolver.ts";
import type { Sql } from "../../src/db/client.ts";
import { body, expectError, type Json } from "../_helpers/expect.ts";

export { body, expectError, type Json };

export const T0 = Date.parse("2026-01-01T00:00:00Z");

export const CREATED_FIELDS = ["active", "createdAt", "events", "id", "url"];
export const SUMMARY_FIELDS = ["active", "createdAt", "events", "failureCount", "id", "lastTriggeredAt", "url"];
export const DETAIL_FIELDS = [...SUMMARY_FIELDS, "lastFailureAt", "lastFailureReason"].sort();

/** Runs `fn` with an app on a fresh schema and a manual clock, closing both afterwards. */
export async function withApp(
  fn: (app: TestApp, db: TestDb, clock: ManualClock) => Promise<void>,
  opts: { env?: Record<string, string>; resolver?: Resolver } = {},
): Promise<void> {
  const db = await createTestDb();
  const clock = new ManualClock(T0);
  const app = await startApp(db.sql, { clock, ...opts });
  try {
    await fn(app, db, clock);
  } finally {
    await app.close();
    await db.close();
  }
}

/** POST /api/user-webhooks with the user's session. */
export function createRaw(app: TestApp, user: User, json: unknown): Promise<Response> {
  return app.request("/api/user-webhooks", { method: "POST", json, cookie: user.cookie });
}

/** Creates a webhook that must succeed; returns the 201 body. */
export async function createOk(
  app: TestApp,
  user: User,
  url: string,
  extra: Json = {},
): Promise<Json & { id: string }> {
  const res = await createRaw(app, user, { url, events: ["message.received"], ...extra });
  const json = await body(res);
  assert.equal(res.status, 201, `creating ${url}: ${JSON.stringify(json)}`);
  return json as Json & { id: string };
}

/** PATCH /api/user-webhooks/{id} with the user's session. */
export function patch(app: TestApp, user: User, id: string, json: unknown): Promise<Response> {
  return app.request(`/api/user-webhooks/${id}`, { method: "PATCH", json, cookie: user.cookie });
}

/** GET /api/user-webhooks/{id}; returns status and body. */
export async function getOne(app: TestApp, user: User, id: string): Promise<{ status: number; json: Json }> {
  const res = await app.request(`/api/user-webhooks/${id}`, { cookie: user.cookie });
  return { status: res.status, json: await body(res) };
}

/** DELETE /api/user-webhooks/{id}; must succeed. */
export async function deleteOk(app: TestApp, user: User, id: string): Promise<void> {
  const res = await app.request(`/api/user-webhooks/${id}`, { method: "DELETE", cookie: user.cookie });
  const json = await body(res);
  assert.equal(res.status, 200, JSON.stringify(json));
}

/** Every row of the webhooks table, in a stable order, as comparable JSON. */
export async function snapshot(sql: Sql): Promise<string> {
  const rows = await sql`SELECT * FROM webhooks ORDER BY id`;
  return JSON.stringify(rows);
}

/** Number of webhooks, optionally of one account. */
export async function countWebhooks(sql: Sql, accountId?: string): Promise<number> {
  const rows = accountId === undefined
    ? await sql`SELECT count(*)::int AS n FROM webhooks`
    : await sql`SELECT count(*)::int AS n FROM webhooks WHERE account_id = ${accountId}`;
  return rows[0]!.n as number;
}
