/**
 * The `deliveries` scenario's backlog drain, this checkout against an earlier
 * commit, alternately, so that a change to the engine is measured side by side
 * with what it changes on a shared machine:
 *
 *   deno run -A --lock=deno.dev.lock tests/bench/drain_ab.ts <commit> [rounds] [--cpu-prof] [--fanout=<n>]
 *
 * Each round drains a backlog of 6,000 (2,000 events x 3 webhooks of one
 * account, released at once, timed from the release's commit; `--fanout=1`:
 * one webhook, whose cap of 16 binds before the account's share) on each
 * tree's service in turn, then runs plain fetch at the service's concurrency
 * for one account (32). Printed per round and as medians: deliveries/s and
 * its ratio to that round's fetch, the stage table (exchange, record, claim),
 * the slots busy with an exchange, and the CPU of the service, PostgreSQL
 * (all of the server's processes: it is shared) and the receiver while
 * draining, with /proc/loadavg. `--cpu-prof` writes
 * V8 profiles of both services to tests/bench/.cache/prof-<tree>/.
 */
import type { TestDb } from "../_helpers/db.ts";
import { serviceEnv } from "../_helpers/process.ts";
import { apiAt } from "../_helpers/app.ts";
import { webhookAccount } from "./accounts.ts";
import { freePort } from "../_helpers/ports.ts";
import { sleep } from "../_helpers/wait.ts";
import { functionCalls, functionStats, stageMetrics, stageTable, withFunctionStats } from "./delivery_stages.ts";
import { CLK_TCK, postgresTicks, postgresTicksUsed, procCpu } from "./proc_cpu.ts";
import { queueBacklog, releaseBacklog } from "./backlog.ts";
import { median } from "./stats.ts";
import { ROOT, spawnReady, startBeforeAndAfter, startTree, stopTrees, type TreeService } from "./trees.ts";

const args = Deno.args.filter((a) => !a.startsWith("--"));
const cpuProf = Deno.args.includes("--cpu-prof");
const [commit, roundsArg] = args;
if (!commit) throw new Error("usage: drain_ab.ts <commit> [rounds] [--cpu-prof]");
const rounds = Number(roundsArg ?? 5);
const EVENTS = 2_000;
const FANOUT = Number(Deno.args.find((a) => a.startsWith("--fanout="))?.slice("--fanout=".length) ?? 3);
const CONCURRENCY = 32;
const CACHE = new URL("./.cache/", import.meta.url);

interface Tree {
  name: string;
  url: string;
  pid: number;
  service: TreeService;
  db: TestDb;
  accountId: string;
}

async function startDrainTree(name: string, root: URL, db: TestDb): Promise<Tree> {
  const flags = cpuProf ? [`--cpu-prof`, `--cpu-prof-dir=${new URL(`prof-${name}/`, CACHE).pathname}`] : [];
  const service = await startTree(root, withFunctionStats(serviceEnv(db)), { denoFlags: flags, name });
  return { name, url: service.url, pid: service.pid, service, db, accountId: "" };
}

async function count(control: number): Promise<number> {
  return (await (await fetch(`http://127.0.0.1:${control}/count`)).json()).count;
}

async function drain(tree: Tree, control: number) {
  await (await fetch(`http://127.0.0.1:${control}/reset?delayMs=0`, { method: "POST" })).text();
  await queueBacklog(tree.db.sql, tree.accountId, EVENTS);
  const m0 = await stageMetrics(tree.url);
  const f0 = await functionStats(tree.db);
  const load = Deno.readTextFileSync("/proc/loadavg").split(" ")[0];
  const released = performance.now();
  await releaseBacklog(tree.db.sql);
  // The clock and the CPU count start once the release has committed (before, nothing is due), as in run.ts.
  const [s0, r0, p0] = [procCpu(tree.pid)!.ticks, procCpu(receiverPid)!.ticks, postgresTicks()];
  const started = performance.now();
  const deadline = Date.now() + 120_000;
  while ((await count(control)) < EVENTS * FANOUT) {
    if (Date.now() > deadline) {
      throw new Error(`${tree.name}: the receiver got ${await count(control)} of ${EVENTS * FANOUT}`);
    }
    await sleep(5);
  }
  const seconds = (performance.now() - started) / 1000;
  const [s1, r1, p1] = [procCpu(tree.pid)!.ticks, procCpu(receiverPid)!.ticks, postgresTicks()];
  // Results still being recorded: let them commit before the next drain, and the backends report their
  // function statistics (at most once a second).
  await sleep(1_300);
  const m1 = await stageMetrics(tree.url);
  const f1 = await functionStats(tree.db);
  const [claimDb, recordDb] = [functionCalls(f0, f1, "claim"), functionCalls(f0, f1, "record")];
  const stages = stageTable(m0, m1, seconds);
  return {
    rate: Math.round((EVENTS * FANOUT) / seconds),
    releaseMs: started - released,
    exchangeMs: stages.exchangeMs,
    recordMs: stages.recordMs,
    claimMs: stages.claimMs,
    rowsPerClaim: stages.rowsPerClaim,
    busy: stages.busySlots,
    serviceCores: (s1 - s0) / CLK_TCK / seconds,
    postgresCores: postgresTicksUsed(p0, p1) / CLK_TCK / seconds,
    receiverCores: (r1 - r0) / CLK_TCK / seconds,
    load: Number(load),
    claimDbMs: claimDb.ms,
    recordCalls: recordDb.calls,
    recordDbMs: recordDb.ms,
  };
}

async function fetchLimit(port: number, control: number): Promise<number> {
  await (await fetch(`http://127.0.0.1:${control}/reset?delayMs=0`, { method: "POST" })).text();
  const out = await new Deno.Command("deno", {
    args: [
      "run",
      "-A",
      "tests/bench/fetch_load.ts",
      `https://localhost:${port}/plain`,
      "30000",
      `${CONCURRENCY}`,
      "230",
    ],
    cwd: ROOT,
    stdout: "piped",
  }).output();
  return Number(new TextDecoder().decode(out.stdout).trim());
}

const f2 = (x: number) => (Math.round(x * 100) / 100).toString();

const port = freePort();
const control = freePort();
const receiver = await spawnReady(["run", "-A", "tests/bench/receiver_server.ts", String(port), String(control)]);
const receiverPid = receiver.pid;
const trees: Tree[] = [];
try {
  await startBeforeAndAfter(commit, trees, startDrainTree);
  for (const t of trees) {
    t.accountId = (await webhookAccount(apiAt(t.url), FANOUT, (path) => `https://localhost:${port}${path}`)).id;
    await drain(t, control); // warm-up: connections, JIT
  }
  type Run = Awaited<ReturnType<typeof drain>> & { ratio: number };
  const runs: Record<string, Run[]> = { before: [], after: [] };
  const fetches: number[] = [];
  for (let round = 0; round < rounds; round++) {
    // Alternate which goes first, so neither always follows the fetch run.
    const order = round % 2 === 0 ? trees : [...trees].reverse();
    const got: Record<string, Awaited<ReturnType<typeof drain>>> = {};
    for (const t of order) got[t.name] = await drain(t, control);
    const limit = await fetchLimit(port, control);
    fetches.push(limit);
    for (const t of trees) {
      const r = { ...got[t.name]!, ratio: got[t.name]!.rate / limit };
      runs[t.name]!.push(r);
      console.log(
        `round ${round} ${t.name.padEnd(6)} ${r.rate}/s (${f2(r.ratio)} of fetch ${limit}) exchange ${
          f2(r.exchangeMs)
        } record ${f2(r.recordMs)} claim ${f2(r.claimMs)} ms / ${f2(r.rowsPerClaim)} rows, busy ${
          f2(r.busy)
        }/32; cores svc ${f2(r.serviceCores)} pg ${f2(r.postgresCores)} rcv ${f2(r.receiverCores)}; in PG: claim ${
          f2(r.claimDbMs)
        } ms, ${r.recordCalls} record calls of ${f2(r.recordDbMs)} ms; release ${
          Math.round(r.releaseMs)
        } ms; load ${r.load}`,
      );
    }
  }
  console.log(`\nmedians of ${rounds} alternating rounds (${commit} = before, this checkout = after):`);
  console.log(`fetch at ${CONCURRENCY}: ${Math.round(median(fetches))}/s`);
  console.log(
    "| tree | deliveries/s | ratio | exchange ms | record ms | claim ms | rows/claim | busy slots | svc cores | pg cores | rcv cores | claim in PG ms | record calls | record in PG ms |",
  );
  console.log("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
  for (const t of trees) {
    const rs = runs[t.name]!;
    const m = (k: keyof Run) => median(rs.map((r) => r[k]));
    console.log(
      `| ${t.name} | ${Math.round(m("rate"))} | ${f2(m("ratio"))} | ${f2(m("exchangeMs"))} | ${f2(m("recordMs"))} | ${
        f2(m("claimMs"))
      } | ${f2(m("rowsPerClaim"))} | ${f2(m("busy"))} | ${f2(m("serviceCores"))} | ${f2(m("postgresCores"))} | ${
        f2(m("receiverCores"))
      } | ${f2(m("claimDbMs"))} | ${Math.round(m("recordCalls"))} | ${f2(m("recordDbMs"))} |`,
    );
  }
} finally {
  // SIGINT lets --cpu-prof write its profile.
  await stopTrees(trees, cpuProf ? "SIGINT" : "SIGKILL");
  receiver.kill("SIGKILL");
  await receiver.status;
}
