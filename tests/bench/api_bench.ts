/**
 * The API scenario: authenticated `GET /api/user-webhooks` (bearer API key,
 * an account with 3 webhooks) under wrk, on three servers side by side in one
 * run: the bare limit (`bare_server.ts`: Deno.serve + postgres.js running the
 * same list query with no framework, authentication or validation), this
 * tree's service, and the tree at `BEFORE_API` (unpacked with `git archive`).
 * They are loaded one at a time, alternately (bare, after, before, each
 * round starting one later) for `rounds` rounds, so that a busier stretch of
 * a shared machine meets every row; the medians and the best of the rounds
 * are reported, the median of the per-round ratios, each server process's
 * CPU time per request (/proc, all its threads: steadier than requests/s when
 * other work shares the cores), and the load average before and after.
 */
import { createTestDb, TEST_DATABASE_URL } from "../_helpers/db.ts";
import { serviceEnv } from "../_helpers/process.ts";
import { freePort } from "../_helpers/ports.ts";
import { type Api, apiAt } from "../_helpers/app.ts";
import { webhookAccount } from "./accounts.ts";
import { debianTool } from "./debian_tools.ts";
import { CLK_TCK, procCpu } from "./proc_cpu.ts";
import { median } from "./stats.ts";
import { ROOT, spawnReady, startTree, treeAt } from "./trees.ts";

/** The commit before the API path's per-request costs were cut (deadline sweep, header sets, log path, ids). */
export const BEFORE_API = "577f5b5";

/** wrk, unpacked from Debian's packages with the LuaJIT library it links (never installed). */
const wrkTool = () =>
  debianTool("wrk", ["wrk", "libluajit-5.1-2"], "usr/bin/wrk", [`usr/lib/${Deno.build.arch}-linux-gnu`]);

/** One wrk run's figures. */
export interface WrkFigures {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  /** The server process's CPU time per request answered, in microseconds (set by the scenario). */
  cpuUs?: number;
}

/** `wrk -t2 -c32` on `url` for `seconds`, with the bearer `key` when given. */
export async function wrk(url: string, key: string | undefined, seconds: number): Promise<WrkFigures> {
  const tool = await wrkTool();
  const args = ["-t2", "-c32", `-d${seconds}s`, "--latency", url];
  if (key) args.unshift("-H", `Authorization: Bearer ${key}`);
  const command = new Deno.Command(tool.bin, { args, env: { LD_LIBRARY_PATH: tool.libs }, stdout: "piped" });
  const out = new TextDecoder().decode((await command.output()).stdout);
  const ms = (label: string) => {
    const m = new RegExp(`\\s${label}\\s+([\\d.]+)(us|ms|s)`).exec(out);
    if (!m) return NaN;
    const v = Number(m[1]);
    return m[2] === "us" ? v / 1000 : m[2] === "s" ? v * 1000 : v;
  };
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  return {
    rps: Math.round(Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0)),
    p50: ms("50%"),
    p99: ms("99%"),
    non2xx,
  };
}

/** A process's CPU time so far (utime + stime of all its threads), in seconds. */
function cpuSeconds(pid: number): number {
  const cpu = procCpu(pid);
  if (cpu === undefined) throw new Error(`process ${pid} is gone`);
  return cpu.ticks / CLK_TCK;
}

/** The 1, 5 and 15 minute load averages. */
export function loadAverage(): string {
  return Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(" ");
}

const round2 = (x: number) => Math.round(x * 100) / 100;

/** A business account with an API key and 3 webhooks: what `GET /api/user-webhooks` lists in every API measure. */
export async function benchAccount(api: Api): Promise<{ id: string; key: string }> {
  const { id, key } = await webhookAccount(api, 3, (path) => `https://localhost:9${path}`);
  return { id, key };
}

/** Each server's figures per round, the medians, and the load average around the measurement. */
export interface ApiFigures {
  rounds: number;
  seconds: number;
  bare: WrkFigures[];
  after: WrkFigures[];
  before: WrkFigures[];
  median: { bare: number; after: number; before: number };
  best: { bare: number; after: number; before: number };
  /** Median per round of after / bare and before / bare, each taken within one round. */
  medianRoundRatio: { after: number; before: number };
  /** Median CPU time of each server process per request, microseconds. */
  cpuUs: { bare: number; after: number; before: number };
  loadAverage: { start: string; end: string };
}

/** Bare, this tree and `BEFORE_API`, alternately, `rounds` rounds of `seconds` each (after a 2 s warm-up each). */
export async function apiScenario(rounds = 5, seconds = 5): Promise<ApiFigures> {
  const beforeRoot = await treeAt(BEFORE_API);
  // A schema each: the trees may have different migrations.
  const dbs = [await createTestDb(), await createTestDb({ migrated: false })] as const;
  const after = await startTree(ROOT, serviceEnv(dbs[0]));
  const before = await startTree(beforeRoot, serviceEnv(dbs[1]));
  let bare: Deno.ChildProcess | undefined;
  try {
    const accounts = { after: await benchAccount(apiAt(after.url)), before: await benchAccount(apiAt(before.url)) };
    const barePort = freePort();
    bare = await spawnReady([
      "run",
      "-A",
      "tests/bench/bare_server.ts",
      String(barePort),
      `${TEST_DATABASE_URL}?search_path=${dbs[0].schema}`,
      accounts.after.id,
    ]);
    const targets = {
      bare: { url: `http://127.0.0.1:${barePort}/`, key: undefined, pid: bare.pid },
      after: { url: `${after.url}/api/user-webhooks`, key: accounts.after.key, pid: after.pid },
      before: { url: `${before.url}/api/user-webhooks`, key: accounts.before.key, pid: before.pid },
    };
    const names = ["bare", "after", "before"] as const;
    for (const name of names) await wrk(targets[name].url, targets[name].key, 2); // warm-up
    const runs = { bare: [] as WrkFigures[], after: [] as WrkFigures[], before: [] as WrkFigures[] };
    const start = loadAverage();
    for (let round = 0; round < rounds; round++) {
      // Each round starts one server later, so that no server is always measured right after the same one.
      for (let i = 0; i < names.length; i++) {
        const name = names[(round + i) % names.length]!;
        const cpu0 = cpuSeconds(targets[name].pid);
        const figures = await wrk(targets[name].url, targets[name].key, seconds);
        if (figures.non2xx > 0) throw new Error(`${name} answered ${figures.non2xx} non-2xx responses`);
        figures.cpuUs = Math.round((cpuSeconds(targets[name].pid) - cpu0) / (figures.rps * seconds) * 1e7) / 10;
        runs[name].push(figures);
      }
      console.log(
        `    round ${round + 1}: ` +
          names.map((n) => `${n} ${runs[n].at(-1)!.rps}/s ${runs[n].at(-1)!.cpuUs} us CPU/request`).join(", ") +
          ` (load ${loadAverage()})`,
      );
    }
    const rps = (name: (typeof names)[number]) => runs[name].map((r) => r.rps);
    return {
      rounds,
      seconds,
      ...runs,
      median: { bare: median(rps("bare")), after: median(rps("after")), before: median(rps("before")) },
      best: { bare: Math.max(...rps("bare")), after: Math.max(...rps("after")), before: Math.max(...rps("before")) },
      medianRoundRatio: {
        after: round2(median(runs.after.map((r, i) => r.rps / runs.bare[i]!.rps))),
        before: round2(median(runs.before.map((r, i) => r.rps / runs.bare[i]!.rps))),
      },
      cpuUs: {
        bare: median(runs.bare.map((r) => r.cpuUs!)),
        after: median(runs.after.map((r) => r.cpuUs!)),
        before: median(runs.before.map((r) => r.cpuUs!)),
      },
      loadAverage: { start, end: loadAverage() },
    };
  } finally {
    if (bare) {
      bare.kill("SIGKILL");
      await bare.status;
    }
    await after.stop();
    await before.stop();
    for (const db of dbs) await db.close();
  }
}
