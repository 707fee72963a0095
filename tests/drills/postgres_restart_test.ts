/**
 * Drill 2: PostgreSQL restarted while deliveries run. The service is not
 * touched: it must survive the outage (its process stays up), notice it
 * (`/readyz` 503), come back by itself (`/readyz` 200) without stalling, deliver
 * every event committed before the restart, and deliver events committed
 * afterwards, including single events sent to an idle queue (which only the
 * LISTEN, subscribed again, wakes promptly).
 *
 * The server is shared with other tests: whatever happens, the finally block
 * brings the cluster back and waits for `pg_isready`.
 */
import assert from "node:assert/strict";
import { createTestDb, TEST_DATABASE_URL } from "../_helpers/db.ts";
import { startReceiver } from "../_helpers/receiver.ts";
import {
  accountWithWebhooks,
  deliveredCount,
  pairKey,
  percentiles,
  report,
  scaled,
  serviceLog,
  sleep,
  statusCounts,
  waitAllDelivered,
  waitAllSucceeded,
  waitUntil,
} from "./_support.ts";
import { serviceEnv, startService } from "../_helpers/process.ts";
import { commitInboxEvents, type Committed } from "../_helpers/events.ts";
import { createNotificationHub } from "../../src/notifications/hub.ts";

const EVENTS_BEFORE = scaled(300, 2000);
const EVENTS_AFTER = scaled(50, 200);
const WEBHOOKS = 2;
/** A slow receiver keeps deliveries running while the server goes down. */
const RECEIVER_DELAY_MS = 200;
/**
 * Once the backlog is done, single events are committed one second apart
 * while the service is idle. A NOTIFY wakes an idle queue and the event
 * arrives in ~10 ms; 1 s is a hundred times that. Without the wake-up (the
 * LISTEN not subscribed again yet, the notifications sent meanwhile lost) the
 * event waits for some timer: seconds, up to the queue's 60 s idle poll.
 */
const IDLE_PROBES = 10;
const IDLE_PROBE_BOUND_MS = 1_000;
const IDLE_PROBE_WAIT_MS = 15_000;
/**
 * Once the database answers again and until everything is delivered, the
 * receiver hears from the service every few ms (64 attempts in flight, 200 ms
 * each). Reconnecting costs milliseconds; a stall (the queue waiting on a query
 * parked behind a reconnect backoff that grew during the outage) costs seconds.
 */
const MAX_RECEIPT_GAP_MS = 1_000;

const PG_URL = new URL(TEST_DATABASE_URL);
/** `<version> <cluster>` of the local cluster behind TEST_DATABASE_URL. */
const CLUSTER = (() => {
  const set = Deno.env.get("DRILL_PG_CLUSTER"); // e.g. "15 main"
  if (set) return set.split(/\s+/);
  try {
    const versions = [...Deno.readDirSync("/etc/postgresql")].map((e) => e.name).sort();
    return versions.length ? [versions.includes("15") ? "15" : versions.at(-1)!, "main"] : undefined;
  } catch {
    return undefined;
  }
})();
const LOCAL_SERVER = ["127.0.0.1", "localhost"].includes(PG_URL.hostname) && (PG_URL.port || "5432") === "5432";
const CAN_RESTART = CLUSTER !== undefined && LOCAL_SERVER;

async function run(cmd: string, args: string[]): Promise<{ code: number; out: string }> {
  const r = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "piped" }).output();
  const dec = new TextDecoder();
  return { code: r.code, out: (dec.decode(r.stdout) + dec.decode(r.stderr)).trim() };
}

/**
 * `DRILL_PG_DOWN_MS=<ms>` keeps the server down that long between stop and
 * start, for a longer outage than `restart` gives (the reconnect backoff of
 * every pool connection grows meanwhile).
 */
const DOWN_MS = Number(Deno.env.get("DRILL_PG_DOWN_MS") ?? 0);

async function stopThenStart(downMs: number): Promise<{ code: number; out: string }> {
  const stop = await pgctl("stop");
  if (stop.code !== 0) return stop;
  await sleep(downMs);
  return await pgctl("start");
}

const pgctl = (action: string) => run("pg_ctlcluster", ["--skip-systemctl-redirect", ...CLUSTER!, action]);

async function pgReady(): Promise<boolean> {
  const r = await run("pg_isready", ["-h", PG_URL.hostname, "-p", PG_URL.port || "5432", "-q"]);
  return r.code === 0;
}

/** Starts the cluster if it is not running and waits until it accepts connections. */
async function ensurePostgresUp(): Promise<void> {
  if ((await pgctl("status")).code !== 0) {
    const started = await pgctl("start");
    if (started.code !== 0) console.error(`pg_ctlcluster start: ${started.out}`);
  }
  const deadline = Date.now() + 60_000;
  while (!(await pgReady())) {
    if (Date.now() > deadline) throw new Error("PostgreSQL did not come back within 60 s");
    await sleep(200);
  }
}

/** GET /readyz with a bound: a status code, "timeout", or "refused" (nothing listens: the process is gone). */
async function readyz(url: string): Promise<number | "timeout" | "refused"> {
  try {
    const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(5_000) });
    await res.body?.cancel();
    return res.status;
  } catch (err) {
    return (err as Error).name === "TimeoutError" ? "timeout" : "refused";
  }
}

/** Retries the drill's own commits while its pool reconnects (the service under test gets no such help). */
async function withRetry<T>(what: string, fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1;; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= 10) throw new Error(`${what}: ${err}`);
      await sleep(200);
    }
  }
}

Deno.test({
  name: "drill: PostgreSQL restarted during deliveries: the service recovers by itself, 0 lost",
  ignore: !CAN_RESTART,
  fn: async () => {
    const db = await createTestDb();
    const receiver = await startReceiver({ handler: { delayMs: RECEIVER_DELAY_MS } });
    const service = await startService(serviceEnv(db, { DELIVERY_TIMEOUT_MS: "3000" }));
    let exitCode: number | undefined;
    /** Fails with the lines the service wrote that are not log records (an uncaught error's report). */
    const failDead = async (when: string): Promise<never> => {
      const raw = (await service.stderr()).split("\n").filter((l) => l.trim() && !l.startsWith("{"));
      exitCode = -1;
      assert.fail(`the service process died ${when}:\n${raw.slice(0, 8).join("\n")}`);
    };
    try {
      const { account, webhooks } = await accountWithWebhooks(service.url, WEBHOOKS, (i) => receiver.url(`/p${i}`));
      const before = await commitInboxEvents(db.sql, account.id, EVENTS_BEFORE);
      const expectedBefore = EVENTS_BEFORE * WEBHOOKS;
      await waitUntil(
        () => receiver.requests.length >= expectedBefore / 4,
        60_000,
        () => `${receiver.requests.length}`,
      );
      assert.equal(await readyz(service.url), 200, "ready before the restart");

      // Poll /readyz every 50 ms from just before the restart until it is 200 again after it.
      const polls: { at: number; status: number | "timeout" | "refused" }[] = [];
      let restartDone = 0;
      /** When the database answered the service again (first 200 after a 503), and what was delivered by then. */
      let dbBack: { at: number; delivered: number } | undefined;
      const pollDeadline = Date.now() + 90_000;
      const poller = (async () => {
        while (Date.now() < pollDeadline) {
          const status = await readyz(service.url);
          polls.push({ at: Date.now(), status });
          if (status === "refused") return;
          if (status === 200 && !dbBack && polls.some((p) => p.status === 503)) {
            dbBack = { at: Date.now(), delivered: deliveredCount(receiver, webhooks, before) };
          }
          if (restartDone && status === 200) return;
          await sleep(50);
        }
      })();

      const receivedAtRestart = receiver.requests.length;
      const rowsAtRestart = await statusCounts(db);
      const restartAt = Date.now();
      try {
        const restart = DOWN_MS > 0 ? await stopThenStart(DOWN_MS) : await pgctl("restart");
        restartDone = Date.now();
        assert.equal(restart.code, 0, `pg_ctlcluster restart: ${restart.out}`);
        await ensurePostgresUp();
      } finally {
        // Whatever went wrong above, the shared server must be up again.
        await ensurePostgresUp();
        restartDone ||= Date.now();
      }
      const pgBackAt = Date.now();

      await poller;
      if (polls.at(-1)?.status === "refused") await failDead("during the outage");
      const firstReadyAt = polls.find((p) => p.at >= restartDone && p.status === 200)?.at;
      const unready = polls.filter((p) => p.status !== 200);
      const statuses: Record<string, number> = {};
      for (const p of polls) statuses[String(p.status)] = (statuses[String(p.status)] ?? 0) + 1;
      assert.ok(
        polls.some((p) => p.status === 503),
        `/readyz answered 503 at least once during the outage (polls: ${JSON.stringify(statuses)})`,
      );
      assert.ok(firstReadyAt !== undefined && dbBack !== undefined, "/readyz is 200 again after the restart");

      // Right after the restart: more events, delivered along with the backlog.
      const after = await withRetry("emit after restart", () => commitInboxEvents(db.sql, account.id, EVENTS_AFTER));
      const all = [...before, ...after];
      const expected = all.length * WEBHOOKS;
      await waitAllDelivered(receiver, webhooks, all, 120_000);
      const allDeliveredAt = Date.now();
      // Attempts whose result could not be recorded are repeated after their lease.
      await waitAllSucceeded(db, 60_000);
      const settledAt = Date.now();

      // The queue is idle now: only a NOTIFY (the LISTEN subscribed again) wakes it at once.
      const probeIds = new Set<string>();
      const probeMs: (number | null)[] = [];
      for (let i = 0; i < IDLE_PROBES; i++) {
        await sleep(1_000);
        const [probe] = await commitInboxEvents(db.sql, account.id, 1);
        probeIds.add(probe!.id);
        const got = () => receiver.requests.filter((r) => JSON.parse(r.body).id === probe!.id);
        await waitUntil(() => got().length >= WEBHOOKS, IDLE_PROBE_WAIT_MS, () => "").catch(() => {});
        const arrived = got();
        const ms = arrived.length >= WEBHOOKS
          ? Math.max(...arrived.map((r) => r.receivedAt.getTime())) - probe!.committedAt
          : null;
        probeMs.push(ms);
        if (ms === null || ms > IDLE_PROBE_BOUND_MS) break; // The finding; the rest would only cost time.
      }
      const lateProbes = probeMs.filter((ms) => ms === null || ms > IDLE_PROBE_BOUND_MS).length;

      const firstByPair = new Map<string, number>();
      for (const r of receiver.requests) {
        const key = pairKey(r.headers["x-webhook-id"] ?? "?", JSON.parse(r.body).id);
        if (!firstByPair.has(key)) firstByPair.set(key, r.receivedAt.getTime());
      }
      const afterLatency = percentiles(
        after.flatMap((e: Committed) => webhooks.map((w) => firstByPair.get(pairKey(w, e.id))! - e.committedAt)),
      );
      const lost = expected - deliveredCount(receiver, webhooks, all);
      // While work was outstanding, the longest time nothing reached the receiver. The service is
      // rightly idle between the end of the backlog and the commit of the events that came after it.
      const beforeDoneAt = Math.max(
        ...before.flatMap((e) => webhooks.map((w) => firstByPair.get(pairKey(w, e.id))!)),
      );
      const afterFrom = after[0]!.committedAt;
      const points = [
        dbBack!.at,
        afterFrom,
        allDeliveredAt,
        ...receiver.requests.map((r) => r.receivedAt.getTime()).filter((t) => t > dbBack!.at && t < allDeliveredAt),
      ].sort((a, b) => a - b);
      let maxReceiptGapMs = 0;
      for (let i = 1; i < points.length; i++) {
        const [from, to] = [points[i - 1]!, points[i]!];
        if (from >= beforeDoneAt && to <= afterFrom) continue; // Nothing outstanding.
        maxReceiptGapMs = Math.max(maxReceiptGapMs, to - from);
      }
      const requests = receiver.requests.filter((r) => !probeIds.has(JSON.parse(r.body).id)).length;
      const health = await fetch(`${service.url}/healthz`).catch(() => undefined);
      await health?.body?.cancel();
      if (!health) await failDead("after the outage");
      exitCode = await service.stop();
      report("postgres-restart", {
        eventsBefore: EVENTS_BEFORE,
        eventsAfter: EVENTS_AFTER,
        webhooks: WEBHOOKS,
        expectedPairs: expected,
        lost,
        requests,
        duplicates: requests - expected,
        receivedAtRestart,
        rowsAtRestart,
        restartCommandMs: restartDone - restartAt,
        pgBackMs: pgBackAt - restartAt,
        readyzPolls: statuses,
        readyzUnreadyMs: unready.length ? unready.at(-1)!.at - unready[0]!.at : 0,
        restartToAllDeliveredMs: allDeliveredAt - restartAt,
        restartToDbBackMs: dbBack!.at - restartAt,
        dbBackToAllDeliveredMs: allDeliveredAt - dbBack!.at,
        maxReceiptGapMs,
        restartToSettledMs: settledAt - restartAt,
        afterRestartLatencyMs: afterLatency,
        idleProbesMs: probeMs,
        serviceLog: await serviceLog(service.stderr),
      });
      assert.equal(lost, 0, "every event committed before and after the restart delivered");
      assert.equal(health!.status, 200, "the service kept running");
      assert.ok(
        maxReceiptGapMs <= MAX_RECEIPT_GAP_MS,
        `after the database was back, with work outstanding, nothing was delivered for ${maxReceiptGapMs} ms ` +
          `(bound ${MAX_RECEIPT_GAP_MS} ms): the service stalled`,
      );
      assert.equal(
        lateProbes,
        0,
        `an idle service took ${probeMs.at(-1) ?? "over " + IDLE_PROBE_WAIT_MS} ms (bound ${IDLE_PROBE_BOUND_MS} ms) ` +
          `to deliver idle probe #${probeMs.length} (one a second once the backlog had settled): ` +
          `no NOTIFY woke it (is the LISTEN subscribed again?)`,
      );
      assert.equal(exitCode, 0, "the service (never restarted) stops cleanly");
    } finally {
      await ensurePostgresUp();
      if (exitCode === undefined) await service.stop().catch(() => {});
      await receiver.close();
      await db.close();
    }
  },
});

Deno.test({
  name: "drill: the notification hub listens again after a PostgreSQL restart and its subscribers re-check",
  ignore: !CAN_RESTART,
  fn: async () => {
    const db = await createTestDb();
    const hubSql = await db.connect(2);
    const hub = createNotificationHub(hubSql);
    const channel = `hubdrill_${crypto.randomUUID().slice(0, 8)}`;
    const heard: string[] = [];
    let resyncs = 0;
    hub.subscribe(channel, { onNotify: (p) => void heard.push(p), onResync: () => void resyncs++ });
    try {
      await hub.start();
      await db.sql`SELECT pg_notify(${channel}, 'before')`;
      await waitUntil(() => heard.includes("before"), 5_000, () => "the NOTIFY before the restart");
      const restarted = await pgctl("restart");
      assert.equal(restarted.code, 0, restarted.out);
      await ensurePostgresUp();
      await waitUntil(() => resyncs >= 1, 10_000, () => "a re-check after the restart");
      // The test's own pool reconnects too; retry its NOTIFY until it goes through.
      await withRetry("NOTIFY after the restart", () => db.sql`SELECT pg_notify(${channel}, 'after')`);
      await waitUntil(() => heard.includes("after"), 5_000, () => "the NOTIFY after the restart");
      assert.deepEqual(heard, ["before", "after"]);
    } finally {
      await ensurePostgresUp();
      await hub.stop().catch(() => {});
      await db.close();
    }
  },
});
