/**
 * The `latency` scenario's steady flow, this checkout against an earlier
 * commit, alternately, so that a change to the engine is measured side by
 * side on a shared machine:
 *
 *   deno run -A --lock=deno.dev.lock tests/bench/latency_ab.ts <commit> [rounds] [--rate=<n>] [--fanout=<n>] [--seconds=<n>]
 *
 * Each tree's service gets an account of its own with `--fanout` webhooks
 * (default 10) to the receiver; each round commits `--rate` events a second
 * (default 200, one per transaction, from this process, through the tree's own
 * outbox: `tests/_helpers/events.ts` of that tree) for `--seconds`
 * (default 5) on each tree in turn, then waits for every delivery. Printed per
 * round: the emit-to-receipt p50/p95/p99 (the receiver's clock minus the
 * event's `createdAt`, stamped as it is emitted, before its commit), the
 * events' own emit-to-commit p50/p95 (one account's events commit one after
 * the other: its lock is held to the commit), the stage table
 * (delivery_stages.ts), the claim and record calls a second and their mean
 * time in PostgreSQL, the CPU of the service, of PostgreSQL (all of the
 * server's processes), of the receiver and of this process while it ran, how
 * busy the whole machine was (/proc/stat), and /proc/loadavg; then each
 * tree's p95 of every round.
 */
import type { TestDb } from "../_helpers/db.ts";
import { serviceEnv } from "../_helpers/process.ts";
import { apiAt } from "../_helpers/app.ts";
import { webhookAccount } from "./accounts.ts";
import type { commitInboxEvents } from "../_helpers/events.ts";
import { freePort } from "../_helpers/ports.ts";
import { sleep } from "../_helpers/wait.ts";
import { functionCalls, functionStats, stageMetrics, stageTable, withFunctionStats } from "./delivery_stages.ts";
import { CLK_TCK, machineTicks, postgresTicks, postgresTicksUsed, procCpu } from "./proc_cpu.ts";
import { percentile, steadily } from "./stats.ts";
import { alternately, spawnReady, startBeforeAndAfter, startTree, stopTrees, type TreeService } from "./trees.ts";

const option = (name: string, fallback: number) =>
  Number(Deno.args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback);
const [commit, roundsArg] = Deno.args.filter((a) => !a.startsWith("--"));
if (!commit) throw new Error("usage: latency_ab.ts <commit> [rounds] [--rate=<n>] [--fanout=<n>] [--seconds=<n>]");
const rounds = Number(roundsArg ?? 3);
const RATE = option("rate", 200);
const FANOUT = option("fanout", 10);
const SECONDS = option("seconds", 5);

const port = freePort();
const control = freePort();
const receiver = await spawnReady(["run", "-A", "tests/bench/receiver_server.ts", String(port), String(control)]);
const receiverJson = async (path: string) => await (await fetch(`http://127.0.0.1:${control}${path}`)).json();

interface Tree {
  name: string;
  service: TreeService;
  db: TestDb;
  accountId: string;
  /** The tree's own outbox commits its events: the time an account's events wait on each other is the tree's. */
  emit: typeof commitInboxEvents;
}

async function startLatencyTree(name: string, root: URL, db: TestDb): Promise<Tree> {
  const service = await startTree(root, withFunctionStats(serviceEnv(db)), { name });
  const api = apiAt(service.url);
  const acc = await webhookAccount(api, FANOUT, (path) => `https://localhost:${port}${path}`);
  const { commitInboxEvents } = await import(new URL("tests/_helpers/events.ts", root).href);
  return { name, service, db, accountId: acc.id, emit: commitInboxEvents };
}

/** The CPU ticks so far of the tree's service, PostgreSQL, the receiver, this process and the machine. */
function cpuNow(tree: Tree) {
  return {
    service: procCpu(tree.service.pid)!.ticks,
    postgres: postgresTicks(),
    receiver: procCpu(receiver.pid)!.ticks,
    bench: procCpu(Deno.pid)!.ticks,
    machine: machineTicks(),
  };
}

/** One steady flow on `tree`'s service, until every delivery arrived. */
async function flow(tree: Tree) {
  await (await fetch(`http://127.0.0.1:${control}/reset?delayMs=0`, { method: "POST" })).text();
  const m0 = await stageMetrics(tree.service.url);
  const f0 = await functionStats(tree.db);
  const load = Deno.readTextFileSync("/proc/loadavg").split(" ")[0];
  const cpu0 = cpuNow(tree);
  const total = RATE * SECONDS;
  const started = performance.now();
  // Each event's own time from its emit to its commit, before any attempt of it exists.
  const commits = await steadily(total, RATE, () => tree.emit(tree.db.sql, tree.accountId, 1, 1));
  const deadline = Date.now() + 120_000;
  while ((await receiverJson("/count")).count < total * FANOUT) {
    if (Date.now() > deadline) throw new Error(`${tree.name}: the receiver got too few deliveries`);
    await sleep(10);
  }
  const seconds = (performance.now() - started) / 1000;
  const cpu1 = cpuNow(tree);
  const stages = stageTable(m0, await stageMetrics(tree.service.url), seconds);
  // The backends report their function statistics at most once a second.
  await sleep(1_100);
  const f1 = await functionStats(tree.db);
  const [claims, records] = [functionCalls(f0, f1, "claim"), functionCalls(f0, f1, "record")];
  const sorted = ((await receiverJson("/stats")).latencies as number[]).sort((a, b) => a - b);
  return {
    p: [50, 95, 99].map((q) => percentile(sorted, q)) as [number, number, number],
    commit: [50, 95].map((q) => Math.round(percentile(commits, q))),
    stages,
    // Calls a second and mean ms in PostgreSQL of the claim and record functions.
    claims: { perSecond: claims.calls / seconds, ms: claims.ms },
    records: { perSecond: records.calls / seconds, ms: records.ms },
    serviceCores: (cpu1.service - cpu0.service) / CLK_TCK / seconds,
    postgresCores: postgresTicksUsed(cpu0.postgres, cpu1.postgres) / CLK_TCK / seconds,
    receiverCores: (cpu1.receiver - cpu0.receiver) / CLK_TCK / seconds,
    benchCores: (cpu1.bench - cpu0.bench) / CLK_TCK / seconds,
    // Of all the cores: how much of the machine was busy, whatever with.
    machineBusy: (cpu1.machine.busy - cpu0.machine.busy) / (cpu1.machine.total - cpu0.machine.total),
    load,
  };
}

const trees: Tree[] = [];
try {
  await startBeforeAndAfter(commit, trees, startLatencyTree);
  const results = await alternately(trees, rounds, flow, (t, r, round) => {
    const s = r.stages;
    console.log(
      `round ${round} ${t.name.padEnd(6)} p50/p95/p99 ${r.p.join("/")} ms (emit -> commit p50/p95 ${
        r.commit.join("/")
      }) | exchange ${s.exchangeMs} record ${s.recordMs} claim ${s.claimMs} ms / ${s.rowsPerClaim} rows, busy ${s.busySlots} | in PG: ${
        Math.round(r.claims.perSecond)
      } claims/s of ${r.claims.ms.toFixed(2)} ms, ${Math.round(r.records.perSecond)} records/s of ${
        r.records.ms.toFixed(2)
      } ms | cores svc ${r.serviceCores.toFixed(2)} pg ${r.postgresCores.toFixed(2)} receiver ${
        r.receiverCores.toFixed(2)
      } bench ${r.benchCores.toFixed(2)}, machine ${
        Math.round(r.machineBusy * 100)
      } % busy of ${navigator.hardwareConcurrency}; load ${r.load}`,
    );
  });
  console.log(`\n${RATE} events/s x ${FANOUT} webhooks for ${SECONDS} s, p95 of each round (ms):`);
  for (const t of trees) console.log(`${t.name}: ${results.get(t.name)!.map((r) => r.p[1]).join(", ")}`);
} finally {
  await stopTrees(trees);
  receiver.kill("SIGKILL");
  await receiver.status;
}
