/**
 * Every variable of the configuration schema, given a bad value, stops the
 * real service process with exit code 2 and exactly one line on stderr that
 * names the variable, with nothing on stdout and no stack trace: values the
 * schema refuses, and values only trying reveals (a HOST that does not resolve
 * or is not local, a port in use, a file that cannot be read or holds no
 * certificate, a database that does not exist, a data directory that cannot
 * be made). The table must cover every variable of `EnvSchema`; one that no
 * value could make bad would say so, with the reason, instead of values.
 *
 * The processes run a few at a time (a refusal comes before the service's
 * modules are loaded, in well under a second), on the installed node_modules
 * without its lock (see `runServiceToExit`); LOG_LEVEL=error keeps log lines
 * out of the way, so stderr holds the refusal alone.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { type EnvName, EnvSchema } from "../../src/config.ts";
import { createTestDb, TEST_DATABASE_URL, type TestDb } from "../_helpers/db.ts";
import { runServiceToExit, serviceEnv } from "../_helpers/process.ts";
import { freePort } from "../_helpers/ports.ts";

/** What a case may refer to: the test schema, a port held open, files made for the test. */
interface Fixtures {
  db: TestDb;
  heldPort: number;
  /** A regular file (a path through it cannot be a directory). */
  file: string;
  /** A directory. */
  dir: string;
  /** A readable file that holds no certificate. */
  notPem: string;
}

/** One bad value, with the other variables it needs (an empty value unsets a variable). */
interface Bad {
  value: string | ((f: Fixtures) => string);
  env?: Record<string, string> | ((f: Fixtures) => Record<string, string>);
}

/** Every variable: its bad values, or why no value of it can be bad. */
type Row = Bad[] | { noBadValue: string };

/** TEST_DATABASE_URL with another user, port or database. */
function databaseUrl(change: { user?: string; port?: number; database?: string }): string {
  const url = new URL(TEST_DATABASE_URL);
  if (change.user !== undefined) url.username = change.user;
  if (change.port !== undefined) url.port = String(change.port);
  if (change.database !== undefined) url.pathname = `/${change.database}`;
  return url.href;
}

const TABLE: Record<EnvName, Row> = {
  PORT: [{ value: "eighty" }, { value: "70000" }, { value: (f) => String(f.heldPort) }],
  HOST: [{ value: "locahost" }, { value: "192.0.2.1" }, { value: "not a host" }],
  HTTP_HEADERS_TIMEOUT_MS: [{ value: "50" }],
  DATABASE_URL: [
    { value: "localhost:5432" },
    { value: databaseUrl({ database: `missing_${crypto.randomUUID().slice(0, 8)}` }) },
    { value: databaseUrl({ user: "no_such_role" }) },
    // One try: the waiting itself has its own test (start_refusals_test.ts).
    { value: () => databaseUrl({ port: freePort() }), env: { DATABASE_CONNECT_TIMEOUT_MS: "0" } },
  ],
  DATABASE_CONNECT_TIMEOUT_MS: [{ value: "-1" }],
  DATABASE_POOL_SIZE: [{ value: "0" }],
  // Read only by the embedded database: DATABASE_URL unset.
  DATA_DIR: [
    { value: (f) => join(f.file, "data"), env: { DATABASE_URL: "" } },
    { value: (f) => f.file, env: { DATABASE_URL: "" } },
  ],
  ADMIN_TOKEN: [{ value: "short" }],
  METRICS_TOKEN: [{ value: "short" }],
  SERVICE_NAME: [{ value: "Inbox Service" }],
  MAIL_DOMAIN: [{ value: "not a domain" }, { value: "inbox@example.com" }],
  SMTP_PORT: [{ value: "-1" }, { value: (f) => String(f.heldPort) }, { value: "7000", env: { PORT: "7000" } }],
  SMTP_MAX_BYTES: [{ value: "100" }],
  SMTP_GREETING_DELAY_MS: [{ value: "-1" }],
  SMTP_MAX_CONNECTIONS: [{ value: "0" }],
  SMTP_MAX_CONNECTIONS_PER_ADDRESS: [{ value: "0" }],
  WEBHOOK_TRUSTED_HOSTS: [{ value: "https://hooks.example.com/" }, { value: "localhost:8443" }],
  WEBHOOK_CA_CERTS: [
    { value: (f) => join(f.dir, "missing.pem") },
    { value: (f) => f.dir },
    { value: (f) => f.notPem },
  ],
  ENCRYPTION_KEY: [{ value: "not-a-key" }],
  DELIVERY_RETENTION_DAYS: [{ value: "0" }],
  EVENT_STREAM_KEEP_ALIVE_MS: [{ value: "10" }],
  EVENT_STREAMS_PER_ACCOUNT: [{ value: "0" }],
  MESSAGE_WAITS_PER_ACCOUNT: [{ value: "0" }],
  EVENT_RETENTION_DAYS: [{ value: "0" }],
  DELIVERY_TIMEOUT_MS: [{ value: "99" }],
  DELIVERY_CONCURRENCY: [{ value: "0" }],
  DELIVERY_CONCURRENCY_PER_ACCOUNT: [{ value: "0" }],
  INBOXES_PER_ACCOUNT: [{ value: "free=0" }],
  WEBHOOK_TESTS_PER_MINUTE: [{ value: "free=5" }],
  REDELIVERIES_PER_MINUTE: [{ value: "pro=many" }],
  COOKIE_SECURE: [{ value: "yes" }],
  SESSION_TTL_DAYS: [{ value: "0" }],
  LOGIN_EMAIL_MAX_FAILURES: [{ value: "0" }],
  LOGIN_ADDRESS_MAX_FAILURES: [{ value: "0" }],
  LOGIN_FAILURE_WINDOW_SECONDS: [{ value: "30" }],
  LOGIN_LOCKOUT_SECONDS: [{ value: "0" }],
  LOGIN_LOCKOUT_MAX_SECONDS: [{ value: "0" }],
  REGISTRATIONS_PER_ADDRESS_PER_HOUR: [{ value: "0" }],
  TRUSTED_PROXIES: [{ value: "proxy.internal" }],
  MAX_BODY_BYTES: [{ value: "10" }],
  LOG_LEVEL: [{ value: "verbose" }],
  LOG_FORMAT: [{ value: "xml" }],
  SMTP_TLS_CERT: [
    { value: (f) => f.notPem, env: (f) => ({ SMTP_TLS_KEY: f.notPem }) },
    { value: (f) => join(f.dir, "missing.pem"), env: (f) => ({ SMTP_TLS_KEY: f.notPem }) },
    { value: (f) => f.notPem },
  ],
  SMTP_TLS_KEY: [{ value: (f) => f.notPem }],
  SMTP_REQUIRE_TLS: [{ value: "yes" }],
  SMTPS_PORT: [{ value: "-1" }, { value: (f) => String(f.heldPort) }, { value: "7001", env: { SMTP_PORT: "7001" } }],
  SMTP_AUTH: [{ value: "apikey" }],
};

/** Runs `jobs` with at most `width` at a time. */
async function inParallel<T>(jobs: Array<() => Promise<T>>, width: number): Promise<T[]> {
  const results: T[] = new Array(jobs.length);
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < jobs.length) {
      const i = next++;
      results[i] = await jobs[i]!();
    }
  }));
  return results;
}

Deno.test("the table covers every variable of the configuration schema", () => {
  assert.deepEqual(Object.keys(TABLE).sort(), Object.keys(EnvSchema.shape).sort());
  for (const [name, row] of Object.entries(TABLE)) {
    if (Array.isArray(row)) assert.ok(row.length > 0, `${name}: give a bad value, or say why there is none`);
    else assert.ok(row.noBadValue.length > 0, `${name}: say why no value can be bad`);
  }
});

Deno.test("every bad value of every variable stops the service: exit code 2, one line on stderr naming the variable", async () => {
  const db = await createTestDb();
  const held = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const dir = await Deno.makeTempDir({ prefix: "inbox-settings-" });
  try {
    const fixtures: Fixtures = {
      db,
      heldPort: (held.addr as Deno.NetAddr).port,
      file: join(dir, "a-file"),
      dir,
      notPem: join(dir, "not.pem"),
    };
    await Deno.writeTextFile(fixtures.file, "");
    await Deno.writeTextFile(fixtures.notPem, "not a certificate\n");

    const cases = (Object.entries(TABLE) as [EnvName, Row][]).flatMap(([name, row]) =>
      Array.isArray(row) ? row.map((bad) => ({ name, bad })) : []
    );
    const outcomes = await inParallel(
      cases.map(({ name, bad }) => async () => {
        const value = typeof bad.value === "function" ? bad.value(fixtures) : bad.value;
        const extra = typeof bad.env === "function" ? bad.env(fixtures) : bad.env ?? {};
        const label = `${name}=${JSON.stringify(value)}`;
        try {
          const out = await runServiceToExit(
            serviceEnv(db, { LOG_LEVEL: "error", ...extra, [name]: value }),
            { timeoutMs: 30_000, sharedNodeModules: true },
          );
          const lines = out.stderr.split("\n").filter((line) => line !== "");
          const problems = [
            out.code === 2 ? undefined : `exit code ${out.code}`,
            out.stdout === "" ? undefined : `stdout: ${out.stdout}`,
            lines.length === 1 ? undefined : `${lines.length} lines on stderr`,
            new RegExp(`^(?:Invalid configuration: )?${name}\\b`).test(lines[0] ?? "")
              ? undefined
              : "the line does not start with the variable",
            /^\s*at |Uncaught|error:/m.test(out.stderr) ? "a stack trace" : undefined,
          ].filter((p) => p !== undefined);
          return problems.length === 0 ? undefined : `${label}: ${problems.join(", ")}\n${out.stderr}`;
        } catch (err) {
          return `${label}: ${err instanceof Error ? err.message : String(err)}`;
        }
      }),
      4,
    );
    const failures = outcomes.filter((o) => o !== undefined);
    assert.deepEqual(failures, [], `${failures.length} of ${cases.length} bad values were not refused properly`);
  } finally {
    held.close();
    await Deno.remove(dir, { recursive: true });
    await db.close();
  }
});
