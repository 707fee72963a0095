/**
 * Earlier commits of this repository run side by side with this one, for the
 * bench's before/after figures: a commit's tree is unpacked once with
 * `git archive` into tests/bench/.cache, and each tree's service runs as its
 * own process on its own schema (the trees have different migrations).
 */
import { freePort } from "../_helpers/ports.ts";
import { waitUntil } from "../_helpers/wait.ts";

/** This checkout. */
export const ROOT = new URL("../../", import.meta.url);
const CACHE = new URL("./.cache/", import.meta.url);

/** The tree of `commit`, unpacked (once) with its dependencies installed. */
export async function treeAt(commit: string): Promise<URL> {
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
  stop(): Promise<void>;
}

/** Starts the service of the tree at `root` with `env`; resolves when it answers. */
export async function startTree(root: URL, env: Record<string, string>): Promise<TreeService> {
  const port = freePort();
  const smtpPort = freePort();
  const child = new Deno.Command("deno", {
    args: ["run", "-A", "src/main.ts"],
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
    () => `${root.pathname} did not start`,
  );
  return {
    url,
    port,
    smtpPort,
    pid: child.pid,
    stop: async () => {
      child.kill("SIGKILL");
      await child.status;
    },
  };
}
