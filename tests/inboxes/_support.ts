/**
 * Shared setup of the inbox and SMTP tests: a fresh schema, the app over
 * real HTTP, the SMTP listener on a random port, and a real HTTPS receiver
 * the delivery client is allowed to reach.
 */
import assert from "node:assert/strict";
import { createTestDb, type TestDb } from "../_helpers/db.ts";
import { startApp, type TestApp, type User } from "../_helpers/app.ts";
import { type Receiver, startReceiver } from "../_helpers/receiver.ts";
import { ManualClock } from "../../src/shared/clock.ts";
import { staticResolver } from "../../src/url_safety/resolver.ts";
import { type SmtpServerHandle, startSmtpServer } from "../../src/smtp/server.ts";
import { body, expectError, type Json } from "../_helpers/expect.ts";

export { body, expectError, type Json };

export const T0 = Date.parse("2026-01-01T00:00:00Z");
export const MAIL_DOMAIN = "inbox.localhost";

/** Everything a test gets. */
export interface InboxContext {
  app: TestApp;
  db: TestDb;
  clock: ManualClock;
  smtp: SmtpServerHandle;
  receiver: Receiver;
}

/** Runs `fn` with app, SMTP listener and receiver on a fresh schema; closes all of them afterwards. */
export async function withInboxes(
  fn: (ctx: InboxContext) => Promise<void>,
  opts: { env?: Record<string, string>; startDeliveries?: boolean } = {},
): Promise<void> {
  const db = await createTestDb();
  const clock = new ManualClock(T0);
  const receiver = await startReceiver();
  const app = await startApp(db.sql, {
    clock,
    env: { WEBHOOK_TRUSTED_HOSTS: "localhost", HOST: "127.0.0.1", SMTP_PORT: "0", ...opts.env },
    resolver: staticResolver({ localhost: ["127.0.0.1"] }),
    startDeliveries: opts.startDeliveries ?? false,
  });
  let smtp: SmtpServerHandle | undefined;
  try {
    smtp = await startSmtpServer(app.deps);
    await fn({ app, db, clock, smtp, receiver });
  } finally {
    await smtp?.close();
    await app.close();
    await receiver.close();
    await db.close();
  }
}

/** POST /api/inboxes with the user's session. */
export function createInboxRaw(app: TestApp, user: User, json: unknown): Promise<Response> {
  return app.request("/api/inboxes", { method: "POST", json, cookie: user.cookie });
}

/** Creates an inbox that must succeed; returns the 201 body. */
export async function createInbox(
  app: TestApp,
  user: User,
  json: Json = {},
): Promise<{ id: string; address: string; createdAt: string; expiresAt: string }> {
  const res = await createInboxRaw(app, user, json);
  const created = await body(res);
  assert.equal(res.status, 201, JSON.stringify(created));
  return created as { id: string; address: string; createdAt: string; expiresAt: string };
}

/** GET a path with the user's session; returns status and JSON body. */
export async function getJson(app: TestApp, user: User, path: string): Promise<{ status: number; json: Json }> {
  const res = await app.request(path, { cookie: user.cookie });
  return { status: res.status, json: await body(res) };
}

/** Registers a webhook to the receiver for `events`; returns its id. */
export async function createWebhook(
  app: TestApp,
  user: User,
  url: string,
  events: string[],
  secret?: string,
): Promise<string> {
  const res = await app.request("/api/user-webhooks", {
    method: "POST",
    json: { url, events, ...(secret ? { secret } : {}) },
    cookie: user.cookie,
  });
  const json = await body(res);
  assert.equal(res.status, 201, JSON.stringify(json));
  return json.id as string;
}

/** `sha256=` + hex HMAC-SHA256 of `body` keyed with `secret`, computed independently with Web Crypto. */
export async function expectedSignature(secret: string, body: string): Promise<string> {
  const enc = new TextEncoder();
  const key = await crypto.subtle.importKey("raw", enc.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, enc.encode(body)));
  return `sha256=${Array.from(mac, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** Number of stored events of a type. */
export async function countEvents(app: TestApp, type: string): Promise<number> {
  const rows = await app.deps.sql`SELECT count(*)::int AS n FROM events WHERE type = ${type}`;
  return rows[0]!.n as number;
}
