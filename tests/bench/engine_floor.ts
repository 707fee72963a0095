/**
 * How far the delivery engine is from the least any engine that keeps its
 * attempts in PostgreSQL can do on this machine, side by side:
 *
 *   deno run -A --lock=deno.dev.lock tests/bench/engine_floor.ts drain [rounds]
 *   deno run -A --lock=deno.dev.lock tests/bench/engine_floor.ts latency [rounds] [--rate=<n>] [--seconds=<n>]
 *
 * The floor engine (`floor_engine.ts`: batched claims and results, two
 * HMACs, the service's delivery client, 32 at a time, none of the service's
 * caps, leases or failure handling) runs on a schema of its own that the
 * same migrations set up (`floor.ts`).
 *
 * `drain`: each round drains the backlog of `drain_ab.ts` (2,000 events x 3
 * webhooks of one account, released at once, timed from the release's
 * commit) with the service of this checkout and with the floor engine, the
 * order reversed every other round, then runs plain `fetch` at 32 with no
 * database (`fetch_load.ts`). Printed per round and as medians:
 * deliveries/s, its ratio to that round's fetch, and the CPU a delivery of
 * the engine, PostgreSQL (all of its processes) and the receiver (for fetch:
 * of the sending process and the receiver).
 *
 * `latency`: each round runs the `latency` scenario's steady flow (`--rate`
 * events a second, default 200, one per transaction, for `--seconds`,
 * default 5, to an account with 10 webhooks) on the service and on the floor
 * engine in turn, and prints the emit-to-receipt p50/p95/p99 of each, then
 * each engine's p95 of every round: the floor engine wakes on the same
 * NOTIFY and claims at once, so what it shows is what the machine (Deno,
 * PostgreSQL, the receiver, sharing two cores) leaves to any engine.
 */
import type { TestDb } from "../_helpers/db.ts";
import { createTestDb } from "../_helpers/db.ts";
import { serviceEnv } from "../_helpers/process.ts";
import { apiAt } from "../_helpers/app.ts";
import { webhookAccount } from "./accounts.ts";
import { commitInboxEvents } from "../_helpers/events.ts";
import { freePort } from "../_helpers/ports.ts";
import { sleep } from "../_helpers/wait.ts";
import { CLK_TCK, postgresTicks, postgresTicksUsed, procCpu } from "./proc_cpu.ts";
import { queueBacklog, releaseBacklog } from "./backlog.ts";
import { median, percentile, steadily } from "./stats.ts";
import { alternately, ROOT, spawnReady, startTree, type TreeService } from "./trees.ts";
import { type FloorEngine, floorSchema, startFloorEngine } from "./floor.ts";

const option = (name: string, fallback: number) =>
  Number(Deno.args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback);
const [mode, roundsArg] = Deno.args.filter((a) => !a.startsWith("--"));
if (mode !== "drain" && mode !== "latency") {
  throw new Error("usage: engine_floor.ts drain|latency [rounds] [--rate=<n>] [--seconds=<n>]");
}
const rounds = Number(roundsArg ?? 5);
const EVENTS = 2_000;
const FANOUT = mode === "drain" ? 3 : 10;
const CONCURRENCY = 32;
const RATE = option("rate", 200);
const SECONDS = option("seconds", 5);

interface Engine {
  name: string;
  pid: number;
  db: TestDb;
  accountId: string;
  /** Runs a flow with the engine listening (the service always is). */
  armed<T>(flow: () => Promise<T>): Promise<T>;
}

const count = async (control: number): Promise<number> =>
  (await (await fetch(`http://127.0.0.1:${control}/count`)).json()).count;
const reset = async (control: number) =>
  await (await fetch(`http://127.0.0.1:${control}/reset?delayMs=0`, { method: "POST" })).text();

interface Drained {
  rate: number;
  engineUs: number;
  postgresUs: number;
  receiverUs: number;
}

async function drain(e: Engine, control: number): Promise<Drained> {
  await reset(control);
  await queueBacklog(e.db.sql, e.accountId, EVENTS);
  await releaseBacklog(e.db.sql);
  const [s0, r0, p0] = [procCpu(e.pid)!.ticks, procCpu(receiverPid)!.ticks, postgresTicks()];
  const started = performance.now();
  const deadline = Date.now() + 120_000;
  const total = EVENTS * FANOUT;
  while ((await count(control)) < total) {
    if (Date.now() > deadline) throw new Error(`${e.name}: the receiver got ${await count(control)} of ${total}`);
    await sleep(5);
  }
  const seconds = (performance.now() - started) / 1000;
  const [s1, r1, p1] = [procCpu(e.pid)!.ticks, procCpu(receiverPid)!.ticks, postgresTicks()];
  const us = (ticks: number) => Math.round((ticks / CLK_TCK) * 1e6 / total);
  // The last results commit before the next drain.
  const left = Date.now() + 10_000;
  while (Date.now() < left) {
    const [row] = await e.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM deliveries WHERE status = 'pending'`;
    if (row?.n === 0) break;
    await sleep(50);
  }
  await sleep(300);
  return {
    rate: Math.round(total / seconds),
    engineUs: us(s1 - s0),
    postgresUs: us(postgresTicksUsed(p0, p1)),
    receiverUs: us(r1 - r0),
  };
}

/** Plain fetch at CONCURRENCY: requests/s, and the CPU of the sender and the receiver a request. */
async function fetchLimit(
  port: number,
  control: number,
): Promise<{ rate: number; senderUs: number; receiverUs: number }> {
  await reset(control);
  const requests = 30_000;
  const child = new Deno.Command("deno", {
    args: [
      "run",
      "-A",
      "tests/bench/fetch_load.ts",
      `https://localhost:${port}/plain`,
      `${requests}`,
      `${CONCURRENCY}`,
      "230",
    ],
    cwd: ROOT,
    stdout: "piped",
  }).spawn();
  // Sampled just before it exits: the last reading of the sender's ticks (start-up included, about 0.1 s).
  let senderTicks = 0;
  const r0 = procCpu(receiverPid)!.ticks;
  const sampler = setInterval(() => senderTicks = procCpu(child.pid)?.ticks ?? senderTicks, 20);
  const out = await child.output();
  clearInterval(sampler);
  const r1 = procCpu(receiverPid)!.ticks;
  const us = (ticks: number) => Math.round((ticks / CLK_TCK) * 1e6 / requests);
  return {
    rate: Number(new TextDecoder().decode(out.stdout).trim()),
    senderUs: us(senderTicks),
    receiverUs: us(r1 - r0),
  };
}

async function drainRounds(engines: Engine[]): Promise<void> {
  for (const e of engines) await e.armed(() => drain(e, control)); // warm-up: connections, JIT
  const runs = new Map<string, (Drained & { ratio: number })[]>(engines.map((e) => [e.name, []]));
  const fetches: { rate: number; senderUs: number; receiverUs: number }[] = [];
  const f2 = (x: number) => (Math.round(x * 100) / 100).toString();
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? engines : [...engines].reverse();
    const got = new Map<string, Drained>();
    for (const e of order) got.set(e.name, await e.armed(() => drain(e, control)));
    const fetched = await fetchLimit(port, control);
    const limit = fetched.rate;
    fetches.push(fetched);
    console.log(
      `round ${round} fetch   ${limit}/s; us a request: sender ${fetched.senderUs}, receiver ${fetched.receiverUs}`,
    );
    for (const e of engines) {
      const r = { ...got.get(e.name)!, ratio: got.get(e.name)!.rate / limit };
      runs.get(e.name)!.push(r);
      console.log(
        `round ${round} ${e.name.padEnd(7)} ${r.rate}/s (${
          f2(r.ratio)
        } of fetch ${limit}); us a delivery: engine ${r.engineUs}, PostgreSQL ${r.postgresUs}, receiver ${r.receiverUs}`,
      );
    }
  }
  console.log(`\nmedians of ${rounds} rounds; fetch at ${CONCURRENCY}`);
  console.log("| engine | deliveries/s | of fetch | engine us | PostgreSQL us | receiver us |");
  console.log("|---|---|---|---|---|---|");
  for (const e of engines) {
    const rs = runs.get(e.name)!;
    const m = (k: keyof (Drained & { ratio: number })) => median(rs.map((r) => r[k]));
    console.log(
      `| ${e.name} | ${Math.round(m("rate"))} | ${f2(m("ratio"))} | ${m("engineUs")} | ${m("postgresUs")} | ${
        m("receiverUs")
      } |`,
    );
  }
  const mf = (k: "rate" | "senderUs" | "receiverUs") => median(fetches.map((f) => f[k]));
  console.log(
    `| plain fetch, no database | ${Math.round(mf("rate"))} | 1 | ${mf("senderUs")} | | ${mf("receiverUs")} |`,
  );
}

/** One steady flow through `e`, until every delivery arrived: emit-to-receipt p50/p95/p99 ms. */
async function flow(e: Engine): Promise<number[]> {
  await reset(control);
  const total = RATE * SECONDS;
  await steadily(total, RATE, () => commitInboxEvents(e.db.sql, e.accountId, 1, 1));
  const deadline = Date.now() + 120_000;
  while ((await count(control)) < total * FANOUT) {
    if (Date.now() > deadline) throw new Error(`${e.name}: the receiver got too few deliveries`);
    await sleep(10);
  }
  const stats = await (await fetch(`http://127.0.0.1:${control}/stats`)).json();
  const sorted = (stats.latencies as number[]).sort((a, b) => a - b);
  return [50, 95, 99].map((q) => percentile(sorted, q));
}

async function latencyRounds(engines: Engine[]): Promise<void> {
  const results = await alternately(engines, rounds, (e) => e.armed(() => flow(e)), (e, p, round) => {
    console.log(`round ${round} ${e.name.padEnd(11)} p50/p95/p99 ${p.join("/")} ms`);
  });
  console.log(`\n${RATE} events/s x ${FANOUT} webhooks for ${SECONDS} s, p95 of each round (ms):`);
  for (const e of engines) console.log(`${e.name}: ${results.get(e.name)!.map((p) => p[1]).join(", ")}`);
}

const port = freePort();
const control = freePort();
const receiver = await spawnReady(["run", "-A", "tests/bench/receiver_server.ts", String(port), String(control)]);
const receiverPid = receiver.pid;
/** The receiver's URL of a webhook, for both engines' accounts. */
const webhookUrl = (path: string) => `https://localhost:${port}${path}`;
let service: TreeService | undefined;
let floor: FloorEngine | undefined;
const dbs: TestDb[] = [];
try {
  const serviceDb = await createTestDb();
  dbs.push(serviceDb);
  service = await startTree(ROOT, serviceEnv(serviceDb), { name: "service" });
  const engines: Engine[] = [{
    name: "service",
    pid: service.pid,
    db: serviceDb,
    accountId: (await webhookAccount(apiAt(service.url), FANOUT, webhookUrl)).id,
    armed: (flow) => flow(),
  }];
  const schema = await floorSchema(webhookUrl, [FANOUT]);
  dbs.push(schema.db);
  floor = await startFloorEngine(schema.db, CONCURRENCY);
  engines.push({
    name: "floor",
    pid: floor.pid,
    db: schema.db,
    accountId: schema.accounts.get(FANOUT)!,
    armed: floor.armed,
  });

  if (mode === "drain") await drainRounds(engines);
  else await latencyRounds(engines);
} finally {
  await floor?.stop();
  await service?.stop();
  for (const d of dbs) await d.close();
  receiver.kill("SIGKILL");
  await receiver.status;
}
