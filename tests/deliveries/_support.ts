/** Shared set-up for delivery tests: an app that can reach the test receiver, a pro user, events. */
import { getJson } from "../_helpers/app.ts";
import type { TestDb } from "../_helpers/db.ts";
import { type Harness, startHarness } from "../_helpers/harness.ts";
import type { Tx } from "../../src/db/client.ts";
import type * as repo from "../../src/deliveries/repo.ts";
import { DeliveryQueue } from "../../src/deliveries/queue.ts";

/** A receiver and an app trusting `localhost` (queue not started: tests drive it), a pro user, jitter 0.5. */
const DELIVERY_PRESET = { receiver: true, user: "pro" } as const;

/** Everything a delivery test needs, closed by `close()`. */
export type DeliveryFixture = Harness<typeof DELIVERY_PRESET>;

/** Starts the delivery preset; `opts` adds variables or starts the queue. */
export function deliveryFixture(
  opts: { env?: Record<string, string>; startDeliveries?: boolean; random?: () => number } = {},
): Promise<DeliveryFixture> {
  return startHarness({ ...DELIVERY_PRESET, random: () => 0.5, ...opts });
}

/**
 * Emits an `inbox.created` event for the fixture's user (or `accountId`),
 * created at the fixture's clock (or `now`), committed; returns the event id.
 */
export async function emitInboxCreated(
  f: DeliveryFixture,
  inboxId = `inb_${crypto.randomUUID()}`,
  accountId = f.user.id,
  now = f.clock.now(),
): Promise<string> {
  return await f.app.deps.outbox.transaction((_tx, emit) =>
    emit(accountId, "inbox.created", {
      inboxId,
      address: `${inboxId}@inbox.localhost`,
      expiresAt: new Date(now.getTime() + 3_600_000).toISOString(),
    }, now)
  );
}

/** GET /api/user-webhooks/{id} as JSON. */
export async function getWebhookJson(f: DeliveryFixture, id: string): Promise<Record<string, unknown>> {
  return (await getJson(f.app, f.user, `/api/user-webhooks/${id}`)).json;
}

/** The delivery log of a webhook (first page, up to 100). */
export async function deliveryLog(f: DeliveryFixture, id: string): Promise<Record<string, unknown>[]> {
  return (await getJson(f.app, f.user, `/api/user-webhooks/${id}/deliveries?limit=100`)).json.data as Record<
    string,
    unknown
  >[];
}

/** How many delivery rows the fixture's schema holds. */
export async function deliveryCount(f: { db: TestDb }): Promise<number> {
  return (await f.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM deliveries`)[0]!.n;
}

/**
 * Claims exactly the attempts `ids` for `worker` until `leaseUntil`, as a
 * claim would, caps aside: their accounts taken (`deliveries_take_accounts`),
 * the rows left pending, and each read with what sending it needs, as the
 * claim's last statement reads it (`deliveries_reserve`,
 * src/deliveries/sql/claim.sql).
 */
export async function claimExactly(
  f: DeliveryFixture,
  ids: string[],
  worker: string,
  leaseUntil: Date,
): Promise<repo.ClaimedDelivery[]> {
  const claimed = await f.db.sql<repo.ClaimedDelivery[]>`
    SELECT d.id, d.event_id, d.webhook_id, w.account_id, d.attempt, e.type AS event_type, e.payload, w.url,
      w.secret_ciphertext, ${leaseUntil}::timestamptz AS lease_until,
      CASE WHEN w.previous_secret_expires_at > ${f.clock.now()} THEN w.previous_secret_ciphertext END
        AS previous_secret_ciphertext
    FROM unnest(${ids}::text[]) WITH ORDINALITY AS u(id, n)
    JOIN deliveries d ON d.id = u.id JOIN events e ON e.id = d.event_id JOIN webhooks w ON w.id = d.webhook_id
    WHERE d.status = 'pending' ORDER BY u.n`;
  const accounts = claimed.map((d) => d.accountId);
  await f.db.sql`SELECT deliveries_take_accounts(${accounts}::text[], ${worker}, ${f.clock.now()}, ${leaseUntil})`;
  return claimed;
}

/** Index entries the transaction has read so far from the pending attempts' indexes. */
export async function pendingIndexReads(tx: Tx, schema: string): Promise<number> {
  const [row] = await tx<{ n: number }[]>`
    SELECT COALESCE(sum(pg_stat_get_xact_tuples_returned(indexrelid)), 0)::int AS n FROM pg_stat_user_indexes
    WHERE schemaname = ${schema} AND indexrelname IN ('deliveries_due_order_idx', 'deliveries_pending_webhook_due_idx')`;
  return row!.n;
}

/**
 * A queue on the fixture's database with 8 slots, whose exchanges are the
 * test's `send` and whose results its `complete` (nothing is recorded
 * unless it records); not started (`start()`, or `runOnce()`).
 */
export function testQueue(
  f: DeliveryFixture,
  o: {
    worker: string;
    caps: repo.Caps;
    send: (d: repo.ClaimedDelivery) => Promise<boolean>;
    complete: () => Promise<unknown>;
    floorRefreshMs?: number;
  },
): DeliveryQueue<boolean> {
  return new DeliveryQueue<boolean>({
    sql: f.db.sql,
    clock: f.clock,
    globalConcurrency: 8,
    databaseOutage: { absorb: () => false },
    ...o,
  });
}
