/**
 * `deno task admin <command>`: the operator interface from a shell, with the
 * same rules as `/admin` over HTTP (it calls the same account service).
 */
import { parseArgs } from "node:util";
import type { z } from "zod";
import { loadConfig } from "../config.ts";
import { type Database, type Db, openDatabase } from "../db/client.ts";
import { migrate } from "../db/migrate.ts";
import { ApiError } from "../errors.ts";
import { systemClock } from "../shared/clock.ts";
import { createAccount, setPlan } from "../accounts/service.ts";
import { findAccountByEmail, findAccountById } from "../accounts/repo.ts";
import {
  type AccountRow,
  EmailSchema,
  PasswordSchema,
  type Plan,
  PLANS,
  PlanSchema,
  toAccountJson,
} from "../accounts/schemas.ts";

const USAGE = `Usage: deno task admin <command>

Commands:
  create-account --email <email> --password <password> [--plan ${PLANS.join("|")}]
      Creates an account (plan free unless given) and prints it as JSON.
  set-plan <account id or email> <plan>
      Sets an account's plan and prints the account as JSON.
  show <account id or email>
      Prints an account as JSON.
  help
      Prints this help.

The database is the one the service uses: DATABASE_URL, or else the embedded
database in DATA_DIR (default ./data), which only one process can open at a time.`;

/** A mistake in how the command was called: usage is printed, exit code 2. */
class UsageError extends Error {}

/** An input the account rules refuse: one line, exit code 1. */
class InputError extends Error {}

type Output = (line: string) => void;

/** A parsed command, checked before the database is opened so mistakes fail fast. */
type Command =
  | { kind: "help" }
  | { kind: "create-account"; email: string; password: string; plan: Plan }
  | { kind: "set-plan"; account: string; plan: Plan }
  | { kind: "show"; account: string };

/** Runs one CLI command; returns the process exit code. */
export async function runCli(
  args: string[],
  env: Record<string, string | undefined>,
  out: Output,
  err: Output,
): Promise<number> {
  let command: Command;
  try {
    command = parseCommand(args);
  } catch (e) {
    if (e instanceof UsageError) {
      err(e.message);
      err("");
      err(USAGE);
      return 2;
    }
    if (e instanceof InputError) {
      err(e.message);
      return 1;
    }
    throw e;
  }
  if (command.kind === "help") {
    out(USAGE);
    return 0;
  }

  let db: Database | undefined;
  try {
    const config = loadConfig(env);
    db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 1 });
    // A fresh database (first run, or before the service ever started) works too.
    await migrate(db.sql);
    const account = await execute(db.sql, command);
    out(JSON.stringify(toAccountJson(account)));
    return 0;
  } catch (e) {
    // ApiError and ConfigError messages are written for people, and so are
    // openDatabase's (a DATA_DIR held by a server) and the driver's connection
    // errors: one line is more use in a shell than a stack trace.
    err(e instanceof Error ? e.message : String(e));
    return 1;
  } finally {
    await db?.close();
  }
}

async function execute(sql: Db, command: Exclude<Command, { kind: "help" }>): Promise<AccountRow> {
  switch (command.kind) {
    case "create-account":
      return await createAccount(sql, systemClock, command);
    case "set-plan":
      return await setPlan(sql, (await findAccount(sql, command.account)).id, command.plan);
    case "show":
      return await findAccount(sql, command.account);
  }
}

/** The account by id, or by email when the reference has an `@` (ids never do). */
async function findAccount(sql: Db, ref: string): Promise<AccountRow> {
  const found = ref.includes("@") ? await findAccountByEmail(sql, ref) : await findAccountById(sql, ref);
  if (!found) throw new ApiError(404, "ACCOUNT_NOT_FOUND", "Account not found");
  // Rebuilt field by field so the password hash can never reach the output.
  return { id: found.id, email: found.email, plan: found.plan, createdAt: found.createdAt };
}

function parseCommand(args: string[]): Command {
  const [name, ...rest] = args;
  switch (name) {
    case undefined:
      throw new UsageError("No command given.");
    case "help":
    case "--help":
    case "-h":
      return { kind: "help" };
    case "create-account": {
      const { values } = parse(rest, {
        email: { type: "string" },
        password: { type: "string" },
        plan: { type: "string" },
      }, 0);
      if (values.email === undefined) throw new UsageError("create-account needs --email.");
      if (values.password === undefined) throw new UsageError("create-account needs --password.");
      return {
        kind: "create-account",
        email: check(EmailSchema, values.email, `Invalid email address: ${values.email}`),
        // Never echo the password back: it may end up in a terminal log.
        password: check(PasswordSchema, values.password, "Password must be 8 to 256 characters"),
        plan: checkPlan(values.plan ?? "free"),
      };
    }
    case "set-plan": {
      const { positionals } = parse(rest, {}, 2);
      const [account, plan] = positionals as [string, string];
      return { kind: "set-plan", account, plan: checkPlan(plan) };
    }
    case "show": {
      const { positionals } = parse(rest, {}, 1);
      return { kind: "show", account: positionals[0]! };
    }
    default:
      throw new UsageError(`Unknown command: ${name}`);
  }
}

type OptionSpec = Record<string, { type: "string" }>;

/** parseArgs in strict mode with exactly `positionalCount` positionals; any slip is a usage error. */
function parse<T extends OptionSpec>(args: string[], options: T, positionalCount: number) {
  let parsed;
  try {
    parsed = parseArgs({ args, options, strict: true, allowPositionals: true });
  } catch (e) {
    throw new UsageError(e instanceof Error ? e.message : String(e));
  }
  if (parsed.positionals.length !== positionalCount) {
    throw new UsageError(
      positionalCount === 0
        ? `Unexpected argument: ${parsed.positionals[0]}`
        : `Expected ${positionalCount} argument(s), got ${parsed.positionals.length}.`,
    );
  }
  return parsed;
}

/** Validates with the same schema as the HTTP API, so both refuse the same inputs. */
function check<T>(schema: z.ZodType<T>, value: string, message: string): T {
  const result = schema.safeParse(value);
  if (!result.success) throw new InputError(message);
  return result.data;
}

function checkPlan(value: string): Plan {
  return check(PlanSchema, value, `Invalid plan "${value}": expected one of ${PLANS.join(", ")}`);
}

if (import.meta.main) Deno.exit(await runCli(Deno.args, Deno.env.toObject(), console.log, console.error));
