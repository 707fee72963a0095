/** Shared set-up for delivery tests: an app that can reach the test receiver, users, webhooks, events. */
import { createTestDb, type TestDb } from "../_helpers/db.ts";
import { newUser, startApp, type TestApp, type User } from "../_helpers/app.ts";
import { type Receiver, startReceiver } from "../_helpers/receiver.ts";
import { ManualClock } from "../../src/shared/clock.ts";
import type { Resolver } from "../../src/url_safety/resolver.ts";
import { emit } from "../../src/events/emit.ts";
import * as repo from "../../src/deliveries/repo.ts";

/** Everything a delivery test needs, closed by `close()`. */
export interface DeliveryFixture {
  db: TestDb;
  app: TestApp;
  clock: ManualClock;
  receiver: Receiver;
  user: User;
  /** Host name -> addresses the app's resolver answers; tests may change it. */
  dns: Map<string, string[]>;
  close(): Promise<void>;
}

/** Starts a receiver and an app (queue not started: tests drive it) trusting `localhost`. */
export async function deliveryFixture(
  opts: { env?: Record<string, string>; startDeliveries?: boolean; random?: () => number } = {},
): Promise<DeliveryFixture> {
  const db = await createTestDb();
  const clock = new ManualClock(Date.parse("2026-03-01T12:00:00Z"));
  const receiver = await startReceiver();
  const dns = new Map<string, string[]>([["localhost", ["127.0.0.1"]]]);
  const resolver: Resolver = (host) => Promise.resolve([...(dns.get(host.toLowerCase()) ?? [])]);
  const app = await startApp(db.sql, {
    clock,
    resolver,
    env: { WEBHOOK_TRUSTED_HOSTS: "localhost", ...opts.env },
    startDeliveries: opts.startDeliveries ?? false,
    random: opts.random ?? (() => 0.5),
  });
  const user = await newUser(app, "pro");
  return {
    db,
    app,
    clock,
    receiver,
    user,
    dns,
    close: async () => {
      await app.close();
      await receiver.close();
      await db.close();
    },
  };
}

/** Registers a webhook through the API; returns its id. */
export async function createWebhook(
  f: DeliveryFixture,
  body: { url: string; events?: string[]; secret?: string },
): Promise<string> {
  const res = await f.app.request("/api/user-webhooks", {
    method: "POST",
    json: { events: ["inbox.created"], ...body },
    cookie: f.user.cookie,
  });
  if (res.status !== 201) throw new Error(`webhook creation failed: ${res.status} ${await res.text()}`);
  return (await res.json()).id;
}

/** Emits an `inbox.created` event for the fixture's user, committed; returns the event id. */
export async function emitInboxCreated(f: DeliveryFixture, inboxId = `inb_${crypto.randomUUID()}`): Promise<string> {
  const now = f.clock.now();
  const { eventId } = await f.app.deps.sql.begin((tx) =>
    emit(tx, f.user.id, "inbox.created", {
      inboxId,
      address: `${inboxId}@inbox.localhost`,
      expiresAt: new Date(now.getTime() + 3_600_000).toISOString(),
    }, now)
  );
  f.app.deps.deliveries.wake();
  return eventId;
}

/** GET /api/user-webhooks/{id} as JSON. */
export async function getWebhookJson(f: DeliveryFixture, id: string): Promise<Record<string, unknown>> {
  const res = await f.app.request(`/api/user-webhooks/${id}`, { cookie: f.user.cookie });
  return await res.json();
}

/** The delivery log of a webhook (first page, up to 100). */
export async function deliveryLog(f: DeliveryFixture, id: string): Promise<Record<string, unknown>[]> {
  const res = await f.app.request(`/api/user-webhooks/${id}/deliveries?limit=100`, { cookie: f.user.cookie });
  return (await res.json()).data;
}

/** Lowercase hex HMAC-SHA256, computed independently of the service's signer. */
export async function hmacHex(secret: string, body: string): Promise<string> {
  const enc = new TextEncoder();
  const key = await crypto.subtle.importKey("raw", enc.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  const sig = new Uint8Array(await crypto.subtle.sign("HMAC", key, enc.encode(body)));
  return [...sig].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** A loopback port nothing listens on (connection refused). */
export function closedPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** Marks exactly the attempts `ids` in flight for `worker` until `leaseUntil`, as a claim would, caps aside. */
export async function claimExactly(
  f: DeliveryFixture,
  ids: string[],
  worker: string,
  leaseUntil: Date,
): Promise<repo.ClaimedDelivery[]> {
  const noCaps = { perTrigger: 1_000, perWebhook: 1_000 };
  return await f.db.sql.begin((tx) => repo.markInFlightWithinCaps(tx, ids, noCaps, f.clock.now(), worker, leaseUntil));
}
