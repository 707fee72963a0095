/**
 * What one delivery allocates in the service's JavaScript heap, this checkout
 * against an earlier commit, alternately:
 *
 *   deno run -A --lock=deno.dev.lock tests/bench/alloc_ab.ts <commit> [rounds] [--rate=<n>] [--fanout=<n>] [--top=<n>]
 *
 * Each tree's service runs with an inspector on a port of its own and an
 * account with `--fanout` webhooks (default 10) to the receiver. Each round
 * commits `--rate` events a second (default 200, one per transaction) to
 * each tree in turn for 6 s, and for the middle 4 s samples the service's
 * allocations (V8's sampling heap profiler, every 4 KiB on average, objects
 * that a collection freed since included): bytes allocated per delivery the
 * receiver got meanwhile. Printed per round, as medians, and the top
 * allocation sites by self size of the last round of each tree.
 *
 * Garbage is CPU twice: to make it and to collect it.
 */
import type { TestDb } from "../_helpers/db.ts";
import { serviceEnv } from "../_helpers/process.ts";
import { apiAt } from "../_helpers/app.ts";
import { webhookAccount } from "./accounts.ts";
import type { commitInboxEvents } from "../_helpers/events.ts";
import { freePort } from "../_helpers/ports.ts";
import { sleep } from "../_helpers/wait.ts";
import { median } from "./stats.ts";
import { alternately, spawnReady, startBeforeAndAfter, startTree, stopTrees, type TreeService } from "./trees.ts";
import { waitUntil } from "../_helpers/wait.ts";

const option = (name: string, fallback: number) =>
  Number(Deno.args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback);
const [commit, roundsArg] = Deno.args.filter((a) => !a.startsWith("--"));
if (!commit) throw new Error("usage: alloc_ab.ts <commit> [rounds] [--rate=<n>] [--fanout=<n>] [--top=<n>]");
const rounds = Number(roundsArg ?? 3);
const RATE = option("rate", 200);
const FANOUT = option("fanout", 10);
const TOP = option("top", 25);
const FLOW_S = 6;
const SAMPLE_S = 4;

const port = freePort();
const control = freePort();
const receiver = await spawnReady(["run", "-A", "tests/bench/receiver_server.ts", String(port), String(control)]);
const receiverCount = async () => (await (await fetch(`http://127.0.0.1:${control}/count`)).json()).count as number;

/** A sampled heap profile's node (Chrome DevTools protocol, HeapProfiler). */
interface SamplingNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SamplingNode[];
}

/** A minimal DevTools protocol client: one call at a time is all this needs. */
async function inspector(inspectPort: number) {
  let targets: { webSocketDebuggerUrl: string }[] = [];
  await waitUntil(
    async () => {
      try {
        targets = await (await fetch(`http://127.0.0.1:${inspectPort}/json/list`)).json();
        return targets.length > 0;
      } catch {
        return false;
      }
    },
    30_000,
    () => `no inspector on port ${inspectPort}`,
  );
  const ws = new WebSocket(targets[0]!.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = reject;
  });
  let id = 0;
  const pending = new Map<number, (result: unknown) => void>();
  ws.onmessage = (m) => {
    const msg = JSON.parse(m.data);
    pending.get(msg.id)?.(msg.result);
    pending.delete(msg.id);
  };
  return {
    call: <T>(method: string, params: Record<string, unknown> = {}) =>
      new Promise<T>((resolve) => {
        pending.set(++id, resolve as (result: unknown) => void);
        ws.send(JSON.stringify({ id, method, params }));
      }),
    close: () => ws.close(),
  };
}

interface Tree {
  name: string;
  service: TreeService;
  db: TestDb;
  accountId: string;
  emit: typeof commitInboxEvents;
  devtools: Awaited<ReturnType<typeof inspector>>;
}

async function startAllocTree(name: string, root: URL, db: TestDb): Promise<Tree> {
  const inspectPort = freePort();
  const service = await startTree(root, serviceEnv(db), { denoFlags: [`--inspect=127.0.0.1:${inspectPort}`], name });
  const url = service.url;
  const api = apiAt(url);
  const acc = await webhookAccount(api, FANOUT, (path) => `https://localhost:${port}${path}`);
  const { commitInboxEvents } = await import(new URL("tests/_helpers/events.ts", root).href);
  return { name, service, db, accountId: acc.id, emit: commitInboxEvents, devtools: await inspector(inspectPort) };
}

/** Self size per allocation site ("function file:line"), and the total. */
function sites(head: SamplingNode): { total: number; bySite: Map<string, number> } {
  const bySite = new Map<string, number>();
  let total = 0;
  const walk = (n: SamplingNode) => {
    const f = n.callFrame;
    const key = `${f.functionName || "(anonymous)"} ${f.url.replace(/^.*?\/(src|vendor|node_modules)\//, "$1/")}:${
      f.lineNumber + 1
    }`;
    bySite.set(key, (bySite.get(key) ?? 0) + n.selfSize);
    total += n.selfSize;
    for (const c of n.children) walk(c);
  };
  walk(head);
  return { total, bySite };
}

/** One steady flow on `tree`, its middle sampled. */
async function flow(tree: Tree) {
  const emitting = (async () => {
    const started = performance.now();
    const total = RATE * FLOW_S;
    for (let i = 0; i < total; i++) {
      const wait = started + (i * 1000) / RATE - performance.now();
      if (wait > 0) await sleep(wait);
      void tree.emit(tree.db.sql, tree.accountId, 1, 1);
    }
  })();
  await sleep(((FLOW_S - SAMPLE_S) / 2) * 1000);
  await tree.devtools.call("HeapProfiler.enable");
  const countBefore = await receiverCount();
  await tree.devtools.call("HeapProfiler.startSampling", {
    samplingInterval: 4096,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  await sleep(SAMPLE_S * 1000);
  const { profile } = await tree.devtools.call<{ profile: { head: SamplingNode } }>("HeapProfiler.stopSampling");
  const delivered = (await receiverCount()) - countBefore;
  await emitting;
  // Every delivery of the flow arrives before the next one starts.
  await waitUntil(
    async () => (await receiverCount()) % (RATE * FLOW_S * FANOUT) === 0,
    60_000,
    () => `${tree.name}: deliveries missing`,
  );
  const { total, bySite } = sites(profile.head);
  return {
    kbPerDelivery: total / 1024 / delivered,
    delivered,
    bySite,
  };
}

const trees: Tree[] = [];
try {
  await startBeforeAndAfter(commit, trees, startAllocTree);
  const results = await alternately(trees, rounds, flow, (t, r, round) => {
    console.log(
      `round ${round} ${t.name.padEnd(6)} ${
        r.kbPerDelivery.toFixed(1)
      } KiB per delivery (${r.delivered} in ${SAMPLE_S} s)`,
    );
  });
  console.log(`\n${RATE} events/s x ${FANOUT} webhooks, medians of ${rounds} rounds:`);
  for (const t of trees) {
    const rs = results.get(t.name)!;
    console.log(
      `${t.name}: ${median(rs.map((r) => r.kbPerDelivery)).toFixed(1)} KiB per delivery`,
    );
  }
  for (const t of trees) {
    const last = results.get(t.name)!.at(-1)!;
    console.log(`\n${t.name}: top allocation sites (self, bytes per delivery), last round`);
    for (const [site, bytes] of [...last.bySite].sort((a, b) => b[1] - a[1]).slice(0, TOP)) {
      console.log(`${String(Math.round(bytes / last.delivered)).padStart(7)}  ${site}`);
    }
  }
} finally {
  for (const t of trees) t.devtools.close();
  await stopTrees(trees);
  receiver.kill("SIGKILL");
  await receiver.status;
}
