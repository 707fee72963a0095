/**
 * The floor engine (`floor_engine.ts`) for a scenario: a schema of its own
 * that the same migrations set up, with accounts whose webhooks point at the
 * receiver (made through a service's API, which then stops), and the engine
 * on it, armed only for its own flows: the NOTIFY channel is the database's,
 * so armed it would claim (nothing) in its schema at every event another
 * engine's flow commits.
 */
import { createTestDb, type TestDb } from "../_helpers/db.ts";
import { serviceEnv } from "../_helpers/process.ts";
import { apiAt } from "../_helpers/app.ts";
import { webhookAccounts } from "./accounts.ts";
import { ROOT, startTree } from "./trees.ts";

/** The floor engine's schema and its accounts, by their number of webhooks. */
export interface FloorSchema {
  db: TestDb;
  accounts: Map<number, string>;
}

/** A schema with one account for each of `fanouts`, that many webhooks each, at `webhookUrl(/h<i>)`. */
export async function floorSchema(webhookUrl: (path: string) => string, fanouts: number[]): Promise<FloorSchema> {
  const db = await createTestDb();
  const setup = await startTree(ROOT, serviceEnv(db), { name: "the floor engine's setup" });
  try {
    return { db, accounts: await webhookAccounts(apiAt(setup.url), fanouts, webhookUrl) };
  } finally {
    await setup.stop("SIGTERM");
  }
}

/** A running floor engine. */
export interface FloorEngine {
  pid: number;
  /** Runs `flow` with the engine answering NOTIFYs. */
  armed<T>(flow: () => Promise<T>): Promise<T>;
  stop(): Promise<void>;
}

/** Starts the floor engine on `db`, sending `concurrency` at a time; resolves once it listens. */
export async function startFloorEngine(db: TestDb, concurrency = 32): Promise<FloorEngine> {
  const url = serviceEnv(db).DATABASE_URL!;
  const child = new Deno.Command("deno", {
    args: ["run", "-A", "tests/bench/floor_engine.ts", url, String(concurrency)],
    cwd: ROOT,
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const writer = child.stdin.getWriter();
  let seen = "";
  /** Reads what the engine prints until `word` ends a line. */
  const until = async (word: string) => {
    while (!seen.includes(`${word}\n`)) {
      const { value, done } = await lines.read();
      if (done) throw new Error(`the floor engine exited before it printed ${word}`);
      seen += value;
    }
    seen = seen.slice(seen.indexOf(`${word}\n`) + word.length + 1);
  };
  const say = async (line: string, answer: string) => {
    await writer.write(new TextEncoder().encode(`${line}\n`));
    await until(answer);
  };
  await until("ready");
  let stopped: Promise<void> | undefined;
  return {
    pid: child.pid,
    armed: async (flow) => {
      await say("arm", "armed");
      try {
        return await flow();
      } finally {
        await say("disarm", "disarmed");
      }
    },
    stop: () =>
      stopped ??= (async () => {
        try {
          child.kill("SIGKILL");
        } catch {
          // It exited already.
        }
        await child.status;
        await lines.cancel().catch(() => {});
      })(),
  };
}
