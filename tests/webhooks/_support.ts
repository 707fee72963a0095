/** Shared helpers of the webhook tests: small request helpers (the app comes from tests/_helpers/harness.ts). */
import assert from "node:assert/strict";
import { createWebhookWith, getJson, type TestApp, type User } from "../_helpers/app.ts";
import type { Sql } from "../../src/db/client.ts";
import { body, expectError, type Json } from "../_helpers/expect.ts";

export { body, expectError, type Json };

export const CREATED_FIELDS = ["active", "createdAt", "events", "id", "url"];
export const SUMMARY_FIELDS = ["active", "createdAt", "events", "failureCount", "id", "lastTriggeredAt", "url"];
export const DETAIL_FIELDS = [...SUMMARY_FIELDS, "lastFailureAt", "lastFailureReason"].sort();

/** POST /api/user-webhooks with the user's session. */
export function createRaw(app: TestApp, user: User, json: unknown): Promise<Response> {
  return app.request("/api/user-webhooks", { method: "POST", json, cookie: user.cookie });
}

/** Creates a `message.received` webhook (plus `extra` fields) that must succeed; returns the 201 body. */
export function createOk(app: TestApp, user: User, url: string, extra: Json = {}): Promise<Json & { id: string }> {
  return createWebhookWith(app, user, { url, events: ["message.received"], ...extra });
}

/** PATCH /api/user-webhooks/{id} with the user's session. */
export function patch(app: TestApp, user: User, id: string, json: unknown): Promise<Response> {
  return app.request(`/api/user-webhooks/${id}`, { method: "PATCH", json, cookie: user.cookie });
}

/** GET /api/user-webhooks/{id}; returns status and body. */
export function getOne(app: TestApp, user: User, id: string): Promise<{ status: number; json: Json }> {
  return getJson(app, user, `/api/user-webhooks/${id}`);
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
