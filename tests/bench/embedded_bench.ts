/**
 * The `embedded` scenario of `deno task bench`: the memory of the service on
 * its embedded database as a new user meets it. Each tree's `start` task
 * command (its own deno.json: the flags and environment of `deno task
 * start`) runs with an empty temporary DATA_DIR, no DATABASE_URL and free
 * ports; the process's RSS (with any process it starts, summed) is sampled
 * every 100 ms from /proc. Measured: the first start's peak (the larger of
 * the samples and the kernel's VmHWM), its RSS 30 s after /healthz answered;
 * then SIGTERM and a second start on the same DATA_DIR, its RSS 30 s after it
 * answered. The same for the tree at `BEFORE_EMBEDDED` (unpacked with `git
 * archive`), side by side in one run.
 */
import { freePort } from "../_helpers/ports.ts";
import { childPids, statusKb } from "../_helpers/proc_status.ts";
import { startCommand } from "../_helpers/process.ts";
import { sleep } from "../_helpers/wait.ts";
import { ROOT, treeAt } from "./trees.ts";

/** The last commit before the embedded database's memory was brought down. */
export const BEFORE_EMBEDDED = "577f5b5";

const IDLE_MS = 30_000;
const SAMPLE_MS = 100;
const READY_TIMEOUT_MS = 120_000;

/** One start: its peak, its RSS once idle, and how long it took to answer. */
export interface StartFigures {
  peakMiB: number;
  idleMiB: number;
  readyS: number;
}

/** A tree's first start (empty DATA_DIR) and a later one (the same DATA_DIR). */
export interface EmbeddedFigures {
  first: StartFigures;
  later: StartFigures;
}

type Row = (
  scenario: string,
  metric: string,
  service: number | string,
  limit?: number | string,
  target?: string,
  against?: string,
) => void;

/** `pid` and the processes it started, and theirs. */
function processTree(pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length; i++) out.push(...childPids(out[i]!));
  return out;
}

/** RSS of the process and its descendants, MiB. */
function treeRssMiB(pid: number): number {
  return processTree(pid).reduce((sum, p) => sum + statusKb(p, "VmRSS"), 0) / 1024;
}

/** The `start` task of the tree at `root`: the environment it sets and the arguments of `deno`. */
async function startOf(root: URL): Promise<{ env: Record<string, string>; args: string[] }> {
  return startCommand(await Deno.readTextFile(new URL("deno.json", root)));
}

/** The environment of a user's shell without any of the service's settings but these. */
function userEnv(dataDir: string): Record<string, string> {
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    HOST: "127.0.0.1",
    PORT: String(freePort()),
    SMTP_PORT: String(freePort()),
    LOG_LEVEL: "error",
  };
  for (const name of ["PATH", "HOME", "DENO_DIR", "XDG_CACHE_HOME", "TMPDIR"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/** Starts the tree's service on `dataDir`, samples it until 30 s after it answers, then stops it with SIGTERM. */
async function oneStart(root: URL, dataDir: string): Promise<StartFigures> {
  const start = await startOf(root);
  const env = { ...start.env, ...userEnv(dataDir) };
  const started = performance.now();
  const child = new Deno.Command("deno", {
    args: start.args,
    cwd: root,
    env,
    clearEnv: true,
    stdout: "null",
    stderr: "inherit",
  }).spawn();
  let peak = 0;
  let exited = false;
  child.status.then(() => exited = true);
  const sample = () => {
    peak = Math.max(peak, treeRssMiB(child.pid), statusKb(child.pid, "VmHWM") / 1024);
  };
  try {
    let readyS: number | undefined;
    while (readyS === undefined) {
      if (exited) throw new Error(`${root.pathname}: the service exited before it answered`);
      if (performance.now() - started > READY_TIMEOUT_MS) throw new Error(`${root.pathname}: did not start`);
      sample();
      try {
        const res = await fetch(`http://127.0.0.1:${env.PORT}/healthz`);
        await res.body?.cancel();
        if (res.ok) readyS = (performance.now() - started) / 1000;
      } catch {
        // Not listening yet.
      }
      if (readyS === undefined) await sleep(SAMPLE_MS);
    }
    const until = performance.now() + IDLE_MS;
    while (performance.now() < until) {
      sample();
      await sleep(SAMPLE_MS);
    }
    sample();
    const idleMiB = treeRssMiB(child.pid);
    return { peakMiB: Math.round(peak), idleMiB: Math.round(idleMiB), readyS: Math.round(readyS * 10) / 10 };
  } finally {
    if (!exited) child.kill("SIGTERM");
    await child.status;
  }
}

/** A first start on an empty DATA_DIR, then a later one on the same directory. */
async function firstAndLater(root: URL): Promise<EmbeddedFigures> {
  const dataDir = await Deno.makeTempDir({ prefix: "inbox-embedded-bench-" });
  try {
    const first = await oneStart(root, dataDir);
    const later = await oneStart(root, dataDir);
    return { first, later };
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
}

/** Both trees, one after the other (never side by side in time: they would share the 2 cores). */
export async function embeddedScenario(row: Row): Promise<{ now: EmbeddedFigures; before: EmbeddedFigures }> {
  const now = await firstAndLater(ROOT);
  const before = await firstAndLater(await treeAt(BEFORE_EMBEDDED));
  const against = `before (${BEFORE_EMBEDDED})`;
  row("embedded", "first start peak RSS MiB", now.first.peakMiB, before.first.peakMiB, "<= 300", against);
  row("embedded", "idle RSS after first start MiB", now.first.idleMiB, before.first.idleMiB, "<= 150", against);
  row("embedded", "idle RSS after a later start MiB", now.later.idleMiB, before.later.idleMiB, "<= 150", against);
  row("embedded", "later start peak RSS MiB", now.later.peakMiB, before.later.peakMiB, "", against);
  row(
    "embedded",
    "/healthz answers after, s: first start / later start",
    `${now.first.readyS} / ${now.later.readyS}`,
    `${before.first.readyS} / ${before.later.readyS}`,
  );
  return { now, before };
}
