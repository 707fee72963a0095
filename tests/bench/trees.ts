/**
 * The bench's child processes: `spawnReady` for a helper server, and earlier
 * commits of this repository run side by side with this one, for the
 * bench's before/after figures: a commit's tree is unpacked once with
 * `git archive` into tests/bench/.cache, and each tree's service runs as its
 * own process on its own schema (the trees have different migrations).
 */
import { createTestDb, type TestDb } from "../_helpers/db.ts";
import { freePort } from "../_helpers/ports.ts";
import { waitUntil } from "../_helpers/wait.ts";

/** This checkout. */
export const ROOT = new URL("../../", import.meta.url);
const CACHE = new URL("./.cache/", import.meta.url);

/** The tree of `commit`, unpacked (once) with its dependencies installed. */
export async function treeAt(ref: string): Promise<URL> {
  // Keyed by the commit's hash: a name such as HEAD moves, and its cached tree would not.
  const rev = await new Deno.Command("git", { args: ["rev-parse", "--short=12", `${ref}^{commit}`], cwd: ROOT })
    .output();
  if (!rev.success) throw new Error(`git rev-parse ${ref} failed`);
  const commit = new TextDecoder().decode(rev.stdout).trim();
  const dir = new URL(`before-${commit}/`, CACHE);
  if (await Deno.stat(new URL("src/main.ts", dir)).then(() => true, () => false)) return dir;
  await Deno.mkdir(dir, { recursive: true });
  const archive = new Deno.Command("git", { args: ["archive", commit], cwd: ROOT, stdout: "piped" }).spawn();
  const untar = new Deno.Command("tar", { args: ["-x", "-C", dir.pathname], stdin: "piped" }).spawn();
  await archive.stdout.pipeTo(untar.stdin);
  if (!(await archive.status).success || !(await untar.status).success) throw new Error(`git archive ${commit} failed`);
  await new Deno.Command("deno", { args: ["install"], cwd: dir, stdout: "null", stderr: "null" }).output();
  return dir;
}

/** A tree's service, running. */
export interface TreeService {
  url: string;
  port: number;
  smtpPort: number;
  pid: number;
  /** Ends it (SIGKILL unless told: SIGINT or SIGTERM let `--cpu-prof` write its profile); once, however often called. */
  stop(signal?: Deno.Signal): Promise<void>;
}

/** How a tree's service is run besides its environment. */
export interface TreeOptions {
  /** Flags for `deno run` before the script (e.g. `--cpu-prof`). */
  denoFlags?: string[];
  /** What the error says when it does not answer. */
  name?: string;
}

/** Starts the service of the tree at `root` with `env`; resolves when it answers. */
export async function startTree(
  root: URL,
  env: Record<string, string>,
  opts: TreeOptions = {},
): Promise<TreeService> {
  const port = freePort();
  const smtpPort = freePort();
  const child = new Deno.Command("deno", {
    args: ["run", "-A", ...(opts.denoFlags ?? []), "src/main.ts"],
    cwd: root,
    env: { ...env, PORT: String(port), HOST: "127.0.0.1", SMTP_PORT: String(smtpPort), LOG_LEVEL: "error" },
    stdout: "null",
    stderr: "inherit",
  }).spawn();
  const url = `http://127.0.0.1:${port}`;
  await waitUntil(
    async () => {
      try {
        const res = await fetch(`${url}/healthz`);
        await res.body?.cancel();
        return res.ok;
      } catch {
        return false;
      }
    },
    120_000,
    () => `${opts.name ?? root.pathname} did not start`,
  );
  let stopped: Promise<void> | undefined;
  return {
    url,
    port,
    smtpPort,
    pid: child.pid,
    stop: (signal = "SIGKILL") =>
      stopped ??= (async () => {
        child.kill(signal);
        await child.status;
      })(),
  };
}

/** A child process of the bench (`deno` with `args`, from this checkout) that prints "ready" when it listens. */
export async function spawnReady(args: string[]): Promise<Deno.ChildProcess> {
  const child = new Deno.Command("deno", { args, cwd: ROOT, stdout: "piped", stderr: "inherit" }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  while (!seen.includes("ready")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${args.join(" ")} exited before it was ready`);
    seen += value;
  }
  reader.releaseLock();
  void child.stdout.cancel().catch(() => {});
  return child;
}

/**
 * Runs `flow` once on each tree (a warm-up: connections, JIT), then `rounds`
 * times on each in turn, the order reversed every other round, so that no
 * tree always runs first on a machine that drifts; `report` sees each
 * result as it comes. Returns each tree's results, by name, in round order.
 */
export async function alternately<T extends { name: string }, R>(
  trees: readonly T[],
  rounds: number,
  flow: (tree: T) => Promise<R>,
  report: (tree: T, result: R, round: number) => void,
): Promise<Map<string, R[]>> {
  for (const t of trees) await flow(t);
  const results = new Map<string, R[]>(trees.map((t) => [t.name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const t of round % 2 === 0 ? trees : [...trees].reverse()) {
      const r = await flow(t);
      results.get(t.name)!.push(r);
      report(t, r, round);
    }
  }
  return results;
}

/**
 * Starts the tree at `commit` ("before", on a database its own migrations
 * set up) and this checkout ("after") through `start`, each pushed onto
 * `trees` as it starts, so that the caller's `stopTrees` stops whatever did.
 */
export async function startBeforeAndAfter<T>(
  commit: string,
  trees: T[],
  start: (name: "before" | "after", root: URL, db: TestDb) => Promise<T>,
): Promise<void> {
  trees.push(await start("before", await treeAt(commit), await createTestDb({ migrated: false })));
  trees.push(await start("after", ROOT, await createTestDb()));
}

/** Stops each tree's service (SIGKILL unless told) and drops its database. */
export async function stopTrees(
  trees: readonly { service: TreeService; db: TestDb }[],
  signal: Deno.Signal = "SIGKILL",
): Promise<void> {
  for (const t of trees) {
    await t.service.stop(signal);
    await t.db.close();
  }
}
