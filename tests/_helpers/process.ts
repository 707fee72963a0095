/**
 * The service as a real child process (`deno task start`), for tests that
 * need what only a process has: start-up, SIGTERM, kill -9, two instances.
 */

import { TEST_DATABASE_URL, type TestDb } from "./db.ts";
import { ADMIN_TOKEN, TEST_ENCRYPTION_KEY } from "./app.ts";
import { freePort } from "./ports.ts";

const ROOT = new URL("../../", import.meta.url);
const TEST_CA = new URL("./certs/ca.pem", import.meta.url).pathname;

/**
 * The environment of a child service on a test schema: PostgreSQL through
 * DATABASE_URL (postgres.js passes `search_path` on as a connection
 * parameter), the test encryption key and admin token, and the test
 * receivers trusted (`localhost`, the test CA).
 */
export function serviceEnv(db: TestDb, extra: Record<string, string> = {}): Record<string, string> {
  const sep = TEST_DATABASE_URL.includes("?") ? "&" : "?";
  return {
    DATABASE_URL: `${TEST_DATABASE_URL}${sep}search_path=${db.schema}`,
    ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    ADMIN_TOKEN,
    WEBHOOK_TRUSTED_HOSTS: "localhost",
    WEBHOOK_CA_CERTS: TEST_CA,
    ...extra,
  };
}

/** A running service process. */
export interface ServiceProcess {
  url: string;
  port: number;
  /** The port of its SMTP listener (the caller's SMTP_PORT, or the one the helper chose). */
  smtpPort: number;
  pid: number;
  /** SIGTERM and wait; returns the exit code. */
  stop(): Promise<number>;
  /** SIGKILL (kill -9) and wait. */
  kill(): Promise<void>;
  /** What the process wrote to stderr so far (only after it exited). */
  stderr(): Promise<string>;
  /** What the process wrote to stdout, its lines joined (only after it exited; empty unless started with `stdout: true`). */
  stdout(): Promise<string>;
  /** The whole lines the process has written to stdout until now, while it runs (`stdout: true`). */
  stdoutLines: readonly string[];
}

/**
 * A `start` task's command line (`[NAME=value ...] deno <args>`), as the
 * environment it sets and the arguments of `deno`, from a deno.json's text.
 */
export function startCommand(denoJson: string): { env: Record<string, string>; args: string[] } {
  const words = String(JSON.parse(denoJson).tasks.start).trim().split(/\s+/);
  const env: Record<string, string> = {};
  while (/^[A-Z_][A-Z0-9_]*=/.test(words[0] ?? "")) {
    const [name, ...value] = words.shift()!.split("=");
    env[name!] = value.join("=");
  }
  if (words[0] !== "deno") throw new Error("the start task no longer runs deno");
  return { env, args: words.slice(1) };
}

/** The `start` task's command, so the direct form cannot drift from it. */
const START = startCommand(Deno.readTextFileSync(new URL("deno.json", ROOT)));
const START_ARGS = START.args;

/**
 * Starts the service with `env` and waits until /healthz answers. By default
 * it runs the start task's command itself, so `kill()` hits the service (a
 * SIGKILL to `deno task` would leave its child running); `viaTask` runs
 * `deno task start` exactly as a user types it; `cwd` runs it in another copy
 * of the project; `stdout` keeps what it writes there (log lines up to info).
 */
export async function startService(
  env: Record<string, string>,
  opts: StartOptions = {},
): Promise<ServiceProcess> {
  for (let attempt = 1;; attempt++) {
    try {
      return await startServiceOnce(env, opts);
    } catch (err) {
      // A port freePort found free can be taken before the service binds it (the ephemeral port of another
      // process's outgoing connection: seen once in CI). The service refuses to start, and another port is tried.
      const taken = /is already in use/.test(String(err)) && env.PORT === undefined && env.SMTP_PORT === undefined;
      if (!taken || attempt === 3) throw err;
    }
  }
}

/** How `startService` runs the service. */
type StartOptions = { viaTask?: boolean; timeoutMs?: number; cwd?: string | URL; stdout?: boolean };

async function startServiceOnce(env: Record<string, string>, opts: StartOptions): Promise<ServiceProcess> {
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const port = freePort();
  const smtpPort = env.SMTP_PORT !== undefined ? Number(env.SMTP_PORT) : freePort();
  const child = new Deno.Command("deno", {
    args: opts.viaTask ? ["task", "--quiet", "start"] : START_ARGS,
    cwd: opts.cwd ?? ROOT,
    env: {
      ...START.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      SMTP_PORT: String(smtpPort),
      COOKIE_SECURE: "false",
      LOG_LEVEL: "warning",
      ...env,
    },
    stdout: opts.stdout ? "piped" : "null",
    stderr: "piped",
  }).spawn();
  const stderrChunks: Uint8Array[] = [];
  const stderrDone = (async () => {
    for await (const chunk of child.stderr) stderrChunks.push(chunk);
  })();
  const stderr = async () => {
    await stderrDone;
    return new TextDecoder().decode(new Uint8Array(stderrChunks.flatMap((c) => [...c])));
  };
  const out = opts.stdout ? collectLines(child.stdout) : { lines: [], done: Promise.resolve() };
  const stdout = async () => {
    await out.done;
    return out.lines.join("\n");
  };
  const drained = Promise.all([stderrDone, out.done]);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  let exited: Deno.CommandStatus | undefined;
  child.status.then((s) => exited = s);
  while (true) {
    if (exited) throw new Error(`service exited with code ${exited.code} before it was ready: ${await stderr()}`);
    try {
      const res = await fetch(`${url}/healthz`);
      await res.body?.cancel();
      if (res.status === 200) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      if (!exited) child.kill("SIGKILL");
      await child.status;
      throw new Error(`service did not start: ${await stderr()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    port,
    smtpPort,
    pid: child.pid,
    stop: async () => {
      child.kill("SIGTERM");
      const status = await child.status;
      await drained;
      return status.code;
    },
    kill: async () => {
      child.kill("SIGKILL");
      await child.status;
      await drained;
    },
    stderr,
    stdout,
    stdoutLines: out.lines,
  };
}

/** What a service process that stopped by itself left: its exit code and output. */
export interface ExitedService {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the start task's command with `env` until the process exits by itself
 * (a refused start); kills it and throws if it is still running after
 * `timeoutMs`. `sharedNodeModules` runs it on the node_modules that
 * `deno install` made without taking its lock, for processes started
 * together: Deno would otherwise make them queue on the lock and say so on
 * stderr ("Blocking waiting for file lock on node_modules directory").
 */
export async function runServiceToExit(
  env: Record<string, string>,
  opts: { timeoutMs?: number; sharedNodeModules?: boolean } = {},
): Promise<ExitedService> {
  const [run, ...flags] = START_ARGS;
  const child = new Deno.Command("deno", {
    args: opts.sharedNodeModules ? [run!, "--node-modules-dir=manual", ...flags] : START_ARGS,
    cwd: ROOT,
    env: {
      ...START.env,
      PORT: String(freePort()),
      HOST: "127.0.0.1",
      SMTP_PORT: String(freePort()),
      LOG_LEVEL: "info",
      ...env,
    },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 60_000);
  try {
    const out = await child.output();
    if (out.signal === "SIGKILL") throw new Error("the service did not exit by itself");
    const text = new TextDecoder();
    return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The lines a child process writes to a piped stream, as they come: `lines`
 * grows while it runs (a line cut across two reads is joined), and `done`
 * resolves when the stream ends.
 */
export function collectLines(stream: ReadableStream<Uint8Array>): { lines: string[]; done: Promise<void> } {
  const lines: string[] = [];
  const done = (async () => {
    let partial = "";
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      const parts = (partial + chunk).split("\n");
      partial = parts.pop()!;
      lines.push(...parts);
    }
    if (partial !== "") lines.push(partial);
  })();
  return { lines, done };
}
