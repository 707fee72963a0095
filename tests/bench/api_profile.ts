/**
 * Where the API path spends its CPU: this tree's service runs under
 * `--cpu-prof` while wrk loads authenticated `GET /api/user-webhooks` (as the
 * api scenario does), then stops on SIGTERM, which writes the profile; the
 * profile's self time is summed by function and by file and the top rows are
 * printed, as shares of the samples.
 *
 *   deno run -A --lock=deno.dev.lock tests/bench/api_profile.ts [seconds] [rows]
 *
 * `PROFILE_FILE=<path.cpuprofile>` only summarizes a profile already written.
 */
import { createTestDb } from "../_helpers/db.ts";
import { serviceEnv } from "../_helpers/process.ts";
import { apiAt } from "../_helpers/app.ts";
import { benchAccount, wrk } from "./api_bench.ts";
import { ROOT, startTree } from "./trees.ts";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/**
 * Self time per function and per file, and total time of this tree's
 * functions, as shares of all samples (idle and GC included).
 */
export function summarize(profile: CpuProfile, top = 40): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
  const short = (url: string) => url.replace(ROOT.href, "").replace(/^.*\/node_modules\/\.deno\//, "npm:");
  const byFunction = new Map<string, number>();
  const byFile = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const f = byId.get(id)!.callFrame;
    const file = short(f.url) || "(native)";
    const name = `${f.functionName || "(anonymous)"} ${file}${f.url ? `:${f.lineNumber + 1}` : ""}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + us);
    byFile.set(file, (byFile.get(file) ?? 0) + us);
  }
  // Total time: each function once per sample whose stack holds it (its callees included); this tree's files only.
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const inclusive = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const f = byId.get(at)!.callFrame;
      if (!f.url.startsWith(ROOT.href) || f.url.includes("/node_modules/")) continue;
      seen.add(`${f.functionName || "(anonymous)"} ${short(f.url)}:${f.lineNumber + 1}`);
    }
    for (const k of seen) inclusive.set(k, (inclusive.get(k) ?? 0) + us);
  }
  const table = (m: Map<string, number>) =>
    [...m].sort((a, b) => b[1] - a[1]).slice(0, top)
      .map(([k, us]) => `${(us / total * 100).toFixed(1).padStart(5)} %  ${k}`).join("\n");
  return `self time by function (${(total / 1e6).toFixed(1)} s sampled)\n${table(byFunction)}\n\n` +
    `self time by file\n${table(byFile)}\n\ntotal time (callees included) of this tree's functions\n${
      table(inclusive)
    }`;
}

async function profileService(seconds: number): Promise<string> {
  const db = await createTestDb();
  const dir = await Deno.makeTempDir({ prefix: "api_profile_" });
  const service = await startTree(ROOT, serviceEnv(db), { denoFlags: ["--cpu-prof", `--cpu-prof-dir=${dir}`] });
  try {
    const { key } = await benchAccount(apiAt(service.url));
    const url = `${service.url}/api/user-webhooks`;
    await wrk(url, key, 2); // warm-up
    const figures = await wrk(url, key, seconds);
    console.log(`wrk: ${figures.rps} requests/s, p50 ${figures.p50} ms, non-2xx ${figures.non2xx}`);
    // SIGTERM: a clean exit writes the profile.
    await service.stop("SIGTERM");
  } finally {
    await service.stop();
    await db.close();
  }
  const file = [...Deno.readDirSync(dir)].find((e) => e.name.endsWith(".cpuprofile"));
  if (!file) throw new Error(`no profile written in ${dir}`);
  return `${dir}/${file.name}`;
}

if (import.meta.main) {
  const [seconds = "10", rows = "40"] = Deno.args;
  const path = Deno.env.get("PROFILE_FILE") ?? await profileService(Number(seconds));
  console.log(`profile: ${path}\n`);
  console.log(summarize(JSON.parse(await Deno.readTextFile(path)), Number(rows)));
}
