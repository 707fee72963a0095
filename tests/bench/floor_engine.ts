/**
 * The least a delivery engine that keeps its attempts in PostgreSQL can do,
 * for `engine_floor.ts`: claim due attempts in batches (the scan starting
 * past what was sent, as the service's does), sign each body (the two HMACs
 * the service computes), send it at a fixed concurrency, and record the
 * results in batches (each attempt's row closed as the service closes it,
 * each webhook's `last_triggered_at` and failure count): the statements any
 * design that writes every result to the row needs, with none of the
 * service's guarantees (no caps per webhook, event or account, no leases, no
 * failures, retries or holds, one instance only).
 *
 *   deno run -A tests/bench/floor_engine.ts <database url> <concurrency>
 *
 * It sends with the service's delivery client (`src/deliveries/http_client.ts`:
 * 28 to 37 us of CPU a request against 42 to 60 for `fetch`,
 * client_cost.ts), so that what it saves is the engine's alone. Once armed (a line "arm" on stdin),
 * wakes on the service's NOTIFY channel, then claims until nothing is due.
 * Prints "ready" once it listens.
 */
import postgres from "postgres";
import { createHmac } from "node:crypto";
import { DELIVERY_CHANNEL } from "../../src/deliveries/outbox.ts";
import { createWebhookHttpClient } from "../../src/deliveries/http_client.ts";
import { systemResolver } from "../../src/url_safety/resolver.ts";

const [url, concurrencyArg] = Deno.args;
if (!url) throw new Error("usage: floor_engine.ts <database url> <concurrency>");
const CONCURRENCY = Number(concurrencyArg ?? 32);
/** Reserved ahead of free slots, as the service's claim does (four times the caps). */
const RESERVE = 4 * CONCURRENCY;
const WORKER = "floor";
/** The webhooks' secret, as accounts.ts sets it (BENCH_SECRET; not imported: that module loads the test helpers). */
const SECRET = "bench-secret-0123456789";

const sql = postgres(url, { max: 4, onnotice: () => {} });
const caPem = await Deno.readTextFile(new URL("../_helpers/certs/ca.pem", import.meta.url));
const client = createWebhookHttpClient({ resolver: systemResolver(), trustedHosts: new Set(["localhost"]) }, caPem);

/** One POST: the response's status and body. */
async function post(url: string, headers: Record<string, string>, body: string): Promise<[number, string]> {
  const out = await client.send({ url, headers, body, timeoutMs: 10_000 }, 2_000);
  if (out.kind === "error") throw new Error(out.reason);
  return [out.status, out.body];
}

interface Due {
  id: string;
  event_id: string;
  webhook_id: string;
  type: string;
  payload: string;
  url: string;
  run_at: Date;
}
interface Result {
  id: string;
  webhookId: string;
  url: string;
  status: number;
  ms: number;
  body: string;
  finished: Date;
}

const held = new Set<string>();
const queue: Due[] = [];
const results: Result[] = [];
let flying = 0;
let claiming = false;
let recording = false;
/** Whether a claim should follow the one under way: it filled its room, or a NOTIFY came meanwhile. */
let more = false;
let notified = false;

/**
 * Where the claim's scan starts, as the service's does: a sent attempt leaves
 * a dead entry at the head of the due order until a VACUUM, and a scan from
 * the start steps over all of them. Once a second, from the start.
 */
const FLOOR_MARGIN_MS = 5_000;
let lowAt = 0;
let lowSince = 0;
function floor(): Date {
  if (Date.now() - lowSince > 1_000) [lowAt, lowSince] = [0, Date.now()];
  return new Date(lowAt);
}

async function claim(): Promise<void> {
  claiming = true;
  notified = false;
  try {
    const room = RESERVE - queue.length - flying;
    const rows = await sql<Due[]>`
      SELECT d.id, d.event_id, d.webhook_id, e.type, e.payload, w.url, d.run_at
      FROM deliveries d JOIN events e ON e.id = d.event_id JOIN webhooks w ON w.id = d.webhook_id
      WHERE d.status = 'pending' AND d.run_at <= now() AND d.run_at >= ${floor().toISOString()}
        AND NOT (d.id = ANY(${[...held]}::text[]))
      ORDER BY d.run_at, d.id LIMIT ${room}`;
    lowAt = rows[0] ? rows[0].run_at.getTime() - FLOOR_MARGIN_MS : Date.now() - FLOOR_MARGIN_MS;
    for (const r of rows) {
      held.add(r.id);
      queue.push(r);
    }
    more = rows.length === room || notified;
  } finally {
    claiming = false;
  }
  pump();
}

function pump(): void {
  while (flying < CONCURRENCY && queue.length > 0) void send(queue.shift()!);
  if (!claiming && more && queue.length + flying <= RESERVE - CONCURRENCY) void claim();
}

async function send(d: Due): Promise<void> {
  flying++;
  const started = performance.now();
  const ts = Math.floor(Date.now() / 1000);
  const standard = createHmac("sha256", SECRET).update(`${d.id}.${ts}.${d.payload}`).digest("base64");
  const github = createHmac("sha256", SECRET).update(d.payload).digest("hex");
  const [status, body] = await post(d.url, {
    "content-type": "application/json",
    "webhook-id": d.id,
    "webhook-timestamp": String(ts),
    "webhook-signature": `v1,${standard}`,
    "x-hub-signature-256": `sha256=${github}`,
    "x-event-type": d.type,
    "x-event-id": d.event_id,
  }, d.payload);
  flying--;
  results.push({
    id: d.id,
    webhookId: d.webhook_id,
    url: d.url,
    status,
    ms: Math.round(performance.now() - started),
    body: body.slice(0, 2_000),
    finished: new Date(),
  });
  pump();
  void record();
}

async function record(): Promise<void> {
  if (recording || results.length === 0) return;
  recording = true;
  const batch = results.splice(0);
  try {
    await sql`
      WITH r AS (
        SELECT * FROM unnest(${batch.map((r) => r.id)}::text[], ${batch.map((r) => r.status)}::int[],
          ${batch.map((r) => r.ms)}::int[], ${batch.map((r) => r.body)}::text[],
          ${batch.map((r) => r.finished.toISOString())}::timestamptz[], ${batch.map((r) => r.url)}::text[],
          ${batch.map((r) => r.webhookId)}::text[]) AS r(id, status, ms, body, finished, url, webhook_id)
      ), closed AS (
        UPDATE deliveries d SET status = 'succeeded', response_status = r.status, duration_ms = r.ms, error = NULL,
          finished_at = r.finished, lease_until = NULL, response_body = r.body, url = r.url, claimed_by = ${WORKER}
        FROM r WHERE d.id = r.id AND d.status = 'pending'
      )
      UPDATE webhooks w SET failure_count = 0, last_triggered_at = g.at
      FROM (SELECT webhook_id, max(finished) AS at FROM r GROUP BY webhook_id) g
      WHERE w.id = g.webhook_id`;
  } finally {
    for (const r of batch) held.delete(r.id);
    recording = false;
  }
  void record();
}

/**
 * Whether it answers NOTIFYs: a line "arm" on stdin turns it on, "disarm"
 * off, each answered by a line "armed" or "disarmed" on stdout. The channel
 * is the database's, so a bench turns it on for its own flows only, and it
 * claims nothing in its schema at every event another engine's flow commits;
 * it stays running between, its code compiled. (Not by signals: SIGUSR1
 * starts Deno's inspector, as it does Node's.)
 */
let armed = false;

await sql.listen(DELIVERY_CHANNEL, () => {
  if (!armed) return;
  notified = true;
  more = true;
  if (!claiming) void claim();
});
console.log("ready");
let input = "";
for await (const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
  input += chunk;
  for (let end = input.indexOf("\n"); end >= 0; end = input.indexOf("\n")) {
    armed = input.slice(0, end) === "arm";
    input = input.slice(end + 1);
    console.log(armed ? "armed" : "disarmed");
  }
}
