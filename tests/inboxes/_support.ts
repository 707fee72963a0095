/**
 * Shared setup of the inbox and SMTP tests: the harness with the SMTP
 * listener on a random port and a real HTTPS receiver the delivery client is
 * allowed to reach, and request helpers.
 */
import assert from "node:assert/strict";
import type { Api, TestApp, User } from "../_helpers/app.ts";
import { type Harness, withService } from "../_helpers/harness.ts";
import { body, expectError, type Json } from "../_helpers/expect.ts";

export { body, expectError, type Json };

export const MAIL_DOMAIN = "inbox.localhost";

const INBOX_PRESET = { receiver: true, smtp: true } as const;

/** Everything a test gets: app, db, clock, smtp, receiver. */
export type InboxContext = Harness<typeof INBOX_PRESET>;

/** Runs `fn` with app, SMTP listener and receiver on a fresh schema; closes all of them afterwards. */
export function withInboxes(
  fn: (ctx: InboxContext) => Promise<void>,
  opts: { env?: Record<string, string>; startDeliveries?: boolean } = {},
): Promise<void> {
  return withService({ ...INBOX_PRESET, ...opts }, fn);
}

/** POST /api/inboxes with the user's session. */
export function createInboxRaw(app: Api, user: User, json: unknown): Promise<Response> {
  return app.request("/api/inboxes", { method: "POST", json, cookie: user.cookie });
}

/** Creates an inbox that must succeed; returns the 201 body. */
export async function createInbox(
  app: Api,
  user: User,
  json: Json = {},
): Promise<{ id: string; address: string; createdAt: string; expiresAt: string }> {
  const res = await createInboxRaw(app, user, json);
  const created = await body(res);
  assert.equal(res.status, 201, JSON.stringify(created));
  return created as { id: string; address: string; createdAt: string; expiresAt: string };
}

/** Number of stored events of a type. */
export async function countEvents(app: TestApp, type: string): Promise<number> {
  const rows = await app.deps.sql`SELECT count(*)::int AS n FROM events WHERE type = ${type}`;
  return rows[0]!.n as number;
}
