/**
 * The `recover` scenario of `deno task bench`: one tenant's webhook has
 * 10,000 events whose only attempt failed; one `POST .../recover` queues them
 * all (one statement, tests/deliveries/recover_test.ts), and the service
 * drains them while another tenant's events flow at a steady rate. Measured:
 * how long the call takes, how long the drain takes, and the other tenant's
 * event -> receiver latency during the drain against the same flow just
 * before it. Beside it, the same drain and flow for an ordinary backlog of
 * that webhook: 10,000 new events, committed with their first attempts an hour
 * away, then all made due by one UPDATE (the `backlog` scenario's release).
 */
import { apiAt, createWebhook, newApiKey, newOperatorAccount } from "../_helpers/app.ts";
import type { TestDb } from "../_helpers/db.ts";
import { commitInboxEvents } from "../_helpers/events.ts";
import type { ServiceProcess } from "../_helpers/process.ts";
import { sleep } from "../_helpers/wait.ts";
import { DELIVERY_CHANNEL } from "../../src/deliveries/outbox.ts";

/** What the scenario needs of the bench's receiver process (run.ts). */
export interface PathReceiver {
  url(path: string): string;
  reset(): Promise<void>;
  count(path?: string): Promise<number>;
  stats(path?: string): Promise<{ count: number; latencies: number[] }>;
}

/** Latencies of a flow: how many, p50, p95, max (ms). */
export interface Latency {
  n: number;
  p50: number;
  p95: number;
  max: number;
}

/** One drain of 10,000 attempts of the webhook while the other tenant's events flow. */
export interface Drain {
  /** What made the 10,000 due (the recover call, or the UPDATE releasing the new events) took this many ms. */
  queuedMs: number;
  /** From then to the last of the 10,000 received. */
  drainS: number;
  drainPerS: number;
  /** The other tenant's events meanwhile. */
  other: Latency;
}

/** What the scenario measured. */
export interface RecoverFigures {
  events: number;
  /** The other tenant's events, one per transaction at this rate a second. */
  rate: number;
  /** The other tenant's flow alone. */
  before: Latency;
  recover: Drain;
  /** The same number of new events of the webhook, released at once. */
  backlog: Drain;
}

const EVENTS = 10_000;
const RATE = 50;
const BASELINE_S = 5;

function latency(values: number[]): Latency {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
  return { n: sorted.length, p50: at(50), p95: at(95), max: sorted.at(-1) ?? NaN };
}

/** Emits the account's events one per transaction at RATE a second until `running()` is false; resolves to how many. */
async function flow(db: TestDb, accountId: string, running: () => boolean): Promise<number> {
  const started = performance.now();
  const commits: Promise<unknown>[] = [];
  for (let i = 0; running(); i++) {
    const wait = started + (i * 1000) / RATE - performance.now();
    if (wait > 0) await sleep(wait);
    commits.push(commitInboxEvents(db.sql, accountId, 1, 1));
  }
  await Promise.all(commits);
  return commits.length;
}

/** Waits until the receiver has `n` requests to `path`. */
async function received(receiver: PathReceiver, path: string, n: number, timeoutMs = 300_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (await receiver.count(path) < n) {
    if (Date.now() > deadline) throw new Error(`${path}: ${await receiver.count(path)} of ${n} received`);
    await sleep(10);
  }
}

export async function recoverScenario(
  service: ServiceProcess,
  db: TestDb,
  receiver: PathReceiver,
): Promise<RecoverFigures> {
  const api = apiAt(service.url);
  const owner = await newOperatorAccount(api, "business");
  const { key } = await newApiKey(api, owner, "recover");
  const webhookId = await createWebhook(api, owner, receiver.url("/recovered"));
  const other = await newOperatorAccount(api, "business");
  await createWebhook(api, other, receiver.url("/tenant-b"));

  // 10,000 events of the last hours, each with one failed attempt on the webhook, as a receiver that was down
  // leaves them (its retries ended, or the webhook was disabled and enabled again).
  await db.sql`
    INSERT INTO events (id, account_id, type, payload, created_at, seq, inbox_id)
    SELECT 'evt_lost_' || g, ${owner.id}, 'inbox.created',
      '{"id":"evt_lost_' || g || '","type":"inbox.created","createdAt":"' ||
        to_char((now() - interval '3 hours' + g * interval '1 second') AT TIME ZONE 'UTC',
          'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') ||
        '","data":{"inboxId":"inb_lost_' || g || '","address":"lost' || g || '@inbox.localhost","expiresAt":"' ||
        to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"}}',
      now() - interval '3 hours' + g * interval '1 second', nextval('events_seq'), 'inb_lost_' || g
    FROM generate_series(1, ${EVENTS}) g`;
  await db.sql`
    INSERT INTO deliveries (id, event_id, webhook_id, attempt, status, run_at, created_at, finished_at,
      response_status, duration_ms, error, url)
    SELECT 'dlv_lost_' || g, 'evt_lost_' || g, ${webhookId}, 1, 'failed', t, t, t, 503, 4, 'HTTP 503',
      ${receiver.url("/recovered")}
    FROM generate_series(1, ${EVENTS}) g, LATERAL (SELECT now() - interval '3 hours' + g * interval '1 second' AS t) x`;
  // As a table that grew to this over hours has been analysed.
  await db.sql`ANALYZE deliveries`;
  await db.sql`ANALYZE events`;

  // The other tenant's flow alone (after a second of it unmeasured: its first attempts open the receiver's
  // connections), then the same flow while the recover drains, then while an ordinary backlog does.
  const warm = performance.now() + 1000;
  await received(receiver, "/tenant-b", await flow(db, other.id, () => performance.now() < warm));
  await receiver.reset();
  const until = performance.now() + BASELINE_S * 1000;
  const alone = await flow(db, other.id, () => performance.now() < until);
  await received(receiver, "/tenant-b", alone);
  const before = latency((await receiver.stats("/tenant-b")).latencies);

  /** Runs `queue` (which makes 10,000 attempts of the webhook due) while the flow goes on, until they are received. */
  const drain = async (queue: () => Promise<void>): Promise<Drain> => {
    await receiver.reset();
    let draining = true;
    const meanwhile = flow(db, other.id, () => draining);
    await sleep(500);
    const started = performance.now();
    await queue();
    const queued = performance.now();
    await received(receiver, "/recovered", EVENTS);
    const drained = performance.now();
    draining = false;
    await received(receiver, "/tenant-b", await meanwhile);
    const drainS = (drained - queued) / 1000;
    return {
      queuedMs: Math.round(queued - started),
      drainS: Math.round(drainS * 100) / 100,
      drainPerS: Math.round(EVENTS / drainS),
      other: latency((await receiver.stats("/tenant-b")).latencies),
    };
  };
  const recover = await drain(async () => {
    const res = await api.request(`/api/user-webhooks/${webhookId}/recover`, {
      method: "POST",
      auth: key,
      json: { since: new Date(Date.now() - 4 * 3_600_000).toISOString() },
    });
    const body = await res.json();
    if (res.status !== 202 || body.queued !== EVENTS) throw new Error(`recover: ${res.status} ${JSON.stringify(body)}`);
  });
  await commitInboxEvents(db.sql, owner.id, EVENTS, 100, new Date(Date.now() + 3_600_000));
  const backlog = await drain(async () => {
    await db.sql.begin(async (tx) => {
      await tx`UPDATE deliveries SET run_at = now() WHERE status = 'pending' AND webhook_id = ${webhookId}`;
      // NOTIFY is transactional: the service hears it once the update has committed.
      await tx`SELECT pg_notify(${DELIVERY_CHANNEL}, '')`;
    });
  });
  return { events: EVENTS, rate: RATE, before, recover, backlog };
}
