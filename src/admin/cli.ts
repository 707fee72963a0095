/**
 * `deno task admin <command>`: the operator interface from a shell, with the
 * same rules as `/admin` over HTTP (it calls the same account service), plus
 * the one-step bootstrap of a deployment: `create-api-key` prints a working
 * key (the only place it ever appears; nothing here logs).
 */
import { parseArgs } from "node:util";
import type { z } from "zod";
import { loadConfig } from "../config.ts";
import { type Database, type Db, openDatabase } from "../db/client.ts";
import { migrate } from "../db/migrate.ts";
import { ApiError } from "../errors.ts";
import { systemClock } from "../shared/clock.ts";
import { createAccount, findAccountByEmail, setPlan } from "../accounts/service.ts";
import { findAccountById } from "../accounts/repo.ts";
import { API_KEY_PLANS, createApiKey } from "../api_keys/service.ts";
import { ApiKeyCreateRequestSchema } from "../api_keys/schemas.ts";
import {
  type AccountRow,
  EmailSchema,
  PasswordSchema,
  type Plan,
  PLANS,
  PlanSchema,
  toAccountJson,
} from "../accounts/schemas.ts";

/** The name of a key made by `create-api-key` without `--name`. */
const DEFAULT_KEY_NAME = "admin-cli";

const USAGE = `Usage: deno task admin <command>

Commands:
  create-account --email <email> --password <password> [--plan ${PLANS.join("|")}]
      Creates an account (plan free unless given) and prints it as JSON.
  set-plan <account id or email> <plan>
      Sets an account's plan and prints the account as JSON.
  show <account id or email>
      Prints an account as JSON.
  create-api-key --email <email> [--name <name>] [--create [--password <password>]]
      Creates an API key for the account (Pro or Business plan) and prints the
      key alone on stdout; it is shown this once. --name defaults to "${DEFAULT_KEY_NAME}".
      With --create, an account that does not exist yet is created first, on the
      business plan (with a random password unless --password is given: it
      signs in with the key).
  help
      Prints this help.

The database is the one the service uses: DATABASE_URL, or else the embedded
database in DATA_DIR (default ./data), which only one process can open at a time.`;

/** The plan of an account that `create-api-key --create` makes. */
const BOOTSTRAP_PLAN: Plan = "business";

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
  | { kind: "show"; account: string }
  | { kind: "create-api-key"; email: string; name: string; create: boolean; password: string | undefined };

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
    if (command.kind === "create-api-key") {
      out(await createKey(db.sql, command, err));
      return 0;
    }
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

/**
 * Issues a key for the account with `command.email` (made first on the
 * business plan with `--create`); returns the key. What was done goes to
 * `note` (stderr), without the key.
 */
async function createKey(
  sql: Database["sql"],
  command: Extract<Command, { kind: "create-api-key" }>,
  note: Output,
): Promise<string> {
  let account = await findAccountByEmail(sql, command.email);
  if (!account && command.create) {
    try {
      account = await createAccount(sql, systemClock, {
        email: command.email,
        password: command.password ?? crypto.getRandomValues(new Uint8Array(24)).toBase64({ alphabet: "base64url" }),
        plan: BOOTSTRAP_PLAN,
      });
      note(`Created account ${account.id} (${account.email}) on the ${account.plan} plan.`);
    } catch (e) {
      // Another process created it meanwhile: use that one.
      if (!(e instanceof ApiError && e.code === "EMAIL_TAKEN")) throw e;
      account = await findAccountByEmail(sql, command.email);
    }
  }
  if (!account) {
    throw new ApiError(
      404,
      "ACCOUNT_NOT_FOUND",
      `No account with the email ${command.email} (add --create to make one)`,
    );
  }
  if (!API_KEY_PLANS.includes(account.plan)) {
    throw new ApiError(
      403,
      "PLAN_REQUIRED",
      `API keys need the pro or business plan; ${account.email} is on ${account.plan} (deno task admin set-plan ${account.email} pro)`,
    );
  }
  const created = await createApiKey(sql, systemClock, account.id, { name: command.name });
  note(
    `Created API key ${created.id} ("${created.name}", ${created.keyPrefix}...) for ${account.email}; it is shown only once.`,
  );
  return created.key;
}

async function execute(
  sql: Db,
  command: Exclude<Command, { kind: "help" | "create-api-key" }>,
): Promise<AccountRow> {
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
  return found;
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
    case "create-api-key": {
      const { values } = parse(rest, {
        email: { type: "string" },
        name: { type: "string" },
        create: { type: "boolean" },
        password: { type: "string" },
      }, 0);
      if (values.email === undefined) throw new UsageError("create-api-key needs --email.");
      if (values.password !== undefined && !values.create) {
        throw new UsageError("--password only goes with --create (it is the new account's password).");
      }
      return {
        kind: "create-api-key",
        email: check(EmailSchema, values.email, `Invalid email address: ${values.email}`),
        name: check(
          ApiKeyCreateRequestSchema.shape.name,
          values.name ?? DEFAULT_KEY_NAME,
          "Key name must be 1 to 100 characters",
        ),
        create: values.create ?? false,
        password: values.password === undefined
          ? undefined
          : check(PasswordSchema, values.password, "Password must be 8 to 256 characters"),
      };
    }
    default:
      throw new UsageError(`Unknown command: ${name}`);
  }
}

type OptionSpec = Record<string, { type: "string" | "boolean" }>;

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
