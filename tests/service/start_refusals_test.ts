/**
 * Start-up failures as a user meets them: the service process is started with
 * one bad setting and must exit with code 2 after one line that names the
 * variable and the cause, with no stack trace. Log lines (JSON, one per try
 * while the database does not answer) may come before it.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { createTestDb, TEST_DATABASE_URL } from "../_helpers/db.ts";
import { TEST_ENCRYPTION_KEY } from "../_helpers/app.ts";
import { type ExitedService, runServiceToExit, serviceEnv, startService } from "../_helpers/process.ts";
import { freePort } from "../_helpers/ports.ts";
import { startTcpProxy } from "../_helpers/tcp_proxy.ts";
import { waitUntil } from "../_helpers/wait.ts";
import { databaseTarget } from "../../src/db/wait_for_database.ts";

/** The one refusal line; asserts exit code 2, no stack trace, and nothing else but JSON log lines. */
function refusal(out: ExitedService): string {
  const all = `${out.stdout}${out.stderr}`;
  assert.equal(out.code, 2, all);
  assert.doesNotMatch(all, /^\s*at /m, "no stack trace");
  assert.doesNotMatch(all, /Uncaught|error:/);
  const plain = (text: string) => text.split("\n").filter((line) => line !== "" && !line.startsWith("{"));
  assert.deepEqual(plain(out.stdout), [], "stdout holds log lines only");
  const lines = plain(out.stderr);
  assert.equal(lines.length, 1, `one line on stderr besides log lines: ${out.stderr}`);
  return lines[0]!;
}

/** The JSON log lines of a stream. */
function logLines(text: string): Array<{ level: string; message: string; properties: Record<string, unknown> }> {
  return text.split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line));
}

/** TEST_DATABASE_URL on another port or database. */
function databaseUrl(change: { port?: number; database?: string }): string {
  const url = new URL(TEST_DATABASE_URL);
  if (change.port !== undefined) url.port = String(change.port);
  if (change.database !== undefined) url.pathname = `/${change.database}`;
  return url.href;
}

Deno.test("DATABASE_URL=localhost:5432 (no scheme) is refused when the configuration is read", async () => {
  const out = await runServiceToExit({ DATABASE_URL: "localhost:5432", ENCRYPTION_KEY: TEST_ENCRYPTION_KEY });
  assert.equal(
    refusal(out),
    "Invalid configuration: DATABASE_URL: must be a URL such as postgres://user:password@localhost:5432/inbox",
  );
});

Deno.test("DATABASE_URL naming a database that does not exist is refused at once", async () => {
  const name = `missing_${crypto.randomUUID().slice(0, 8)}`;
  const out = await runServiceToExit({
    DATABASE_URL: databaseUrl({ database: name }),
    ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
  });
  assert.equal(
    refusal(out),
    `DATABASE_URL: database "${name}" does not exist on ${
      databaseTarget(TEST_DATABASE_URL)
    }: create it, or name an existing database`,
  );
  assert.deepEqual(logLines(out.stderr), [], "no retries: waiting would not create it");
});

Deno.test("DATABASE_URL that does not answer: each try is logged, then start-up gives up after DATABASE_CONNECT_TIMEOUT_MS", async () => {
  const port = freePort();
  const out = await runServiceToExit({
    DATABASE_URL: databaseUrl({ port }),
    DATABASE_CONNECT_TIMEOUT_MS: "1500",
    ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
  });
  const line = refusal(out);
  const match = new RegExp(
    `^DATABASE_URL: PostgreSQL at 127\\.0\\.0\\.1:${port} does not answer \\(connection refused\\); ` +
      `gave up after (\\d+) tries in \\d+ s: check that it runs and that the host and port are right$`,
  ).exec(line);
  assert.ok(match, line);
  const tries = Number(match[1]);
  assert.ok(tries >= 2, "it kept trying");
  const logged = logLines(out.stderr);
  assert.deepEqual(
    logged.map((l) => [l.level, l.properties.attempt, l.properties.reason]),
    Array.from({ length: tries - 1 }, (_, i) => ["WARN", i + 1, "connection refused"]),
    "one warning per failed try before the last",
  );
  assert.doesNotMatch(out.stdout + out.stderr, /postgres:\/\//, "the URL (and its password) is never printed");
});

Deno.test("a database that answers only after a while: start-up waits for it (LOG_LEVEL=WARN shows the tries)", async () => {
  const db = await createTestDb();
  const target = new URL(TEST_DATABASE_URL);
  const proxy = startTcpProxy({ hostname: target.hostname, port: Number(target.port || 5432) });
  try {
    proxy.startingUp();
    const env = serviceEnv(db, { LOG_LEVEL: "WARN" });
    const url = new URL(env.DATABASE_URL!);
    url.host = `127.0.0.1:${proxy.port}`;
    const starting = startService({ ...env, DATABASE_URL: url.href });
    // The service has tried (and been told the server is starting) twice: now let it answer.
    await waitUntil(() => proxy.turnedAway >= 2, 30_000, () => `${proxy.turnedAway} connections tried`);
    proxy.restore();
    const service = await starting;
    const health = await fetch(`${service.url}/readyz`);
    assert.equal(health.status, 200);
    await health.body?.cancel();
    assert.equal(await service.stop(), 0);
    const tries = logLines(await service.stderr()).filter((l) => l.message.includes("does not answer"));
    assert.ok(tries.length >= 1, "the failed tries were logged at WARN");
    for (const l of tries) {
      assert.equal(l.level, "WARN");
      assert.equal(l.properties.reason, "the server is starting up");
    }
  } finally {
    proxy.close();
    await db.close();
  }
});

Deno.test("PORT, SMTP_PORT or SMTPS_PORT already in use is refused with one line naming it", async () => {
  const db = await createTestDb();
  const held = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (held.addr as Deno.NetAddr).port;
  try {
    const http = await runServiceToExit(serviceEnv(db, { PORT: String(port) }));
    assert.equal(
      refusal(http),
      `PORT: port ${port} on 127.0.0.1 is already in use: stop the process that holds it, or set PORT to a free port`,
    );
    const smtp = await runServiceToExit(serviceEnv(db, { SMTP_PORT: String(port) }));
    assert.equal(
      refusal(smtp),
      `SMTP_PORT: port ${port} on 127.0.0.1 is already in use: stop the process that holds it, or set SMTP_PORT to a free port`,
    );
    const smtps = await runServiceToExit(serviceEnv(db, { SMTPS_PORT: String(port) }));
    assert.equal(
      refusal(smtps),
      `SMTPS_PORT: port ${port} on 127.0.0.1 is already in use: stop the process that holds it, or set SMTPS_PORT to a free port`,
    );
  } finally {
    held.close();
    await db.close();
  }
});

Deno.test("SMTP_TLS_CERT without SMTP_TLS_KEY, or files that hold no certificate, are refused with one line naming the variable", async () => {
  const alone = await runServiceToExit({ SMTP_TLS_CERT: "/etc/ssl/mail.pem", ENCRYPTION_KEY: TEST_ENCRYPTION_KEY });
  assert.equal(
    refusal(alone),
    "Invalid configuration: SMTP_TLS_CERT: is set without SMTP_TLS_KEY: set both (PEM files of the certificate and " +
      "its key), or neither for a self-signed certificate",
  );
  const db = await createTestDb();
  const dir = await Deno.makeTempDir({ prefix: "inbox-smtp-files-" });
  try {
    const missing = join(dir, "missing.pem");
    const out = await runServiceToExit(serviceEnv(db, { SMTP_TLS_CERT: missing, SMTP_TLS_KEY: missing }));
    assert.equal(refusal(out), `SMTP_TLS_CERT: cannot read ${missing} (no such file or directory)`);
  } finally {
    await Deno.remove(dir, { recursive: true });
    await db.close();
  }
});

Deno.test("DATA_DIR whose embedded database another process has open is refused", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "inbox-locked-" });
  // The lock an embedded service holds on its data directory, held here instead.
  const lock = await Deno.open(join(dataDir, ".lock"), { create: true, write: true });
  try {
    assert.ok(await lock.tryLock(true));
    const out = await runServiceToExit({ DATA_DIR: dataDir, ENCRYPTION_KEY: TEST_ENCRYPTION_KEY });
    assert.equal(
      refusal(out),
      `DATA_DIR: another process is using the embedded database in ${dataDir}: stop it first, or set DATABASE_URL to share a PostgreSQL server`,
    );
  } finally {
    lock.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});

/** Makes `dir` unwritable, even for root (who ignores modes): `chattr +i`. Returns the undo. */
async function makeUnwritable(dir: string): Promise<() => Promise<void>> {
  if (Deno.uid() !== 0) {
    await Deno.chmod(dir, 0o555);
    return () => Deno.chmod(dir, 0o755);
  }
  const chattr = async (flag: string) => {
    const out = await new Deno.Command("chattr", { args: [flag, dir] }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  };
  await chattr("+i");
  return () => chattr("-i");
}

Deno.test("DATA_DIR that cannot be written is refused with the cause", async () => {
  const parent = await Deno.makeTempDir({ prefix: "inbox-unwritable-" });
  try {
    // A path through a regular file: no directory can be made there.
    const file = join(parent, "a-file");
    await Deno.writeTextFile(file, "");
    const throughFile = join(file, "data");
    const out = await runServiceToExit({ DATA_DIR: throughFile, ENCRYPTION_KEY: TEST_ENCRYPTION_KEY });
    assert.equal(
      refusal(out),
      `DATA_DIR: cannot write to ${throughFile} (a part of the path is a file, not a directory): give this user a writable directory, or set DATABASE_URL`,
    );

    // A directory this user may not write to, where the embedded mode would generate its key.
    const readOnly = join(parent, "read-only");
    await Deno.mkdir(readOnly);
    const undo = await makeUnwritable(readOnly);
    try {
      const denied = await runServiceToExit({ DATA_DIR: readOnly });
      assert.equal(
        refusal(denied),
        `DATA_DIR: cannot write to ${readOnly} (permission denied): give this user a writable directory, or set DATABASE_URL`,
      );
    } finally {
      await undo();
    }
  } finally {
    await Deno.remove(parent, { recursive: true });
  }
});

Deno.test("DATA_DIR/encryption.key that holds no key (garbage, empty) is refused before the database is opened", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "inbox-bad-key-" });
  const keyFile = join(dataDir, "encryption.key");
  try {
    // Not base64, a key of 16 bytes, and an empty file (a truncated copy).
    for (const content of ["not a key\n", `${crypto.getRandomValues(new Uint8Array(16)).toBase64()}\n`, ""]) {
      await Deno.writeTextFile(keyFile, content);
      const out = await runServiceToExit({ DATA_DIR: dataDir });
      assert.equal(
        refusal(out),
        `DATA_DIR: ${keyFile} does not hold a key (32 bytes in base64): restore the key this database was set up with, or set ENCRYPTION_KEY`,
        JSON.stringify(content),
      );
      assert.equal(await Deno.readTextFile(keyFile), content, "the file is left as it was");
      const entries = [...Deno.readDirSync(dataDir)].map((e) => e.name);
      assert.deepEqual(entries, ["encryption.key"], "no database was created or migrated");
    }
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("a migration file that differs from the one the database applied is refused with one line naming the file", async () => {
  const db = await createTestDb();
  try {
    // What the database recorded when it applied 0012 is not this file: as if the file were edited since.
    const applied = "0123456789ab".repeat(5) + "cdef";
    await db.sql`UPDATE schema_migrations SET checksum = ${applied} WHERE version = 12`;
    const file = await Deno.readFile(new URL("../../src/db/migrations/0012_claim_function.sql", import.meta.url));
    const checksum = createHash("sha256").update(file).digest("hex");
    const out = await runServiceToExit(serviceEnv(db));
    assert.equal(
      refusal(out),
      `Migration src/db/migrations/0012_claim_function.sql differs from the one this database applied (checksum 0123456789ab applied, ${
        checksum.slice(0, 12)
      } in the file); applied migrations are history: restore the file and add a new migration`,
    );
    const [row] = await db.sql<{ checksum: string }[]>`SELECT checksum FROM schema_migrations WHERE version = 12`;
    assert.equal(row!.checksum, applied, "the record is left as it was");
  } finally {
    await db.close();
  }
});

Deno.test("a database that a newer release migrated is refused with one line naming its migration", async () => {
  const db = await createTestDb();
  try {
    await db.sql`INSERT INTO schema_migrations (version, name, checksum) VALUES (9000, 'from_a_newer_release', 'x')`;
    const last = [...Deno.readDirSync(new URL("../../src/db/migrations/", import.meta.url))].map((e) => e.name).sort()
      .at(-1);
    const out = await runServiceToExit(serviceEnv(db));
    assert.equal(
      refusal(out),
      `This database has applied migration 9000_from_a_newer_release.sql, which this release does not have (its last is ${last}): a newer release migrated it; start that release or a newer one`,
    );
  } finally {
    await db.close();
  }
});
