/**
 * `deno task start` as a new user runs it: a child process on the embedded
 * database, then on PostgreSQL through DATABASE_URL; each serves /healthz and
 * keeps its data across a restart (SIGTERM, start again).
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { TEST_DATABASE_URL } from "../_helpers/db.ts";
import { childPids } from "../_helpers/proc_status.ts";
import { runServiceToExit, startService } from "../_helpers/process.ts";

const ROOT = new URL("../../", import.meta.url);

async function register(url: string, email: string): Promise<number> {
  const res = await fetch(`${url}/api/auth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password: "password123" }),
  });
  await res.body?.cancel();
  return res.status;
}

async function login(url: string, email: string): Promise<number> {
  const res = await fetch(`${url}/api/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password: "password123" }),
  });
  await res.body?.cancel();
  return res.status;
}

/** The environment of `pid`'s child processes (the service that `deno task` started), one map each. */
function childrenEnv(pid: number): Map<string, string>[] {
  return childPids(pid).map((child) => {
    const vars = Deno.readTextFileSync(`/proc/${child}/environ`).split("\0").filter((v) => v !== "");
    return new Map(vars.map((v) => [v.slice(0, v.indexOf("=")), v.slice(v.indexOf("=") + 1)]));
  });
}

Deno.test("deno task start on the embedded database: serves, stops on SIGTERM, keeps data", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "inbox-start-" });
  try {
    const first = await startService({ DATA_DIR: dataDir }, { viaTask: true });
    const thresholds = childrenEnv(first.pid).map((env) => env.get("MALLOC_MMAP_THRESHOLD_"));
    assert.equal(await register(first.url, "persist@example.com"), 201);
    assert.equal(await first.stop(), 0, "clean exit on SIGTERM");
    // glibc's malloc serves 256 KiB and more from mappings of their own, returned on free (tests/bench/README.md,
    // embedded): the task sets it for the service it starts.
    assert.deepEqual(thresholds, ["262144"]);
    // Without ENCRYPTION_KEY the embedded database gets a key of its own, private to its owner.
    const keyFile = `${dataDir}/encryption.key`;
    const key = (await Deno.readTextFile(keyFile)).trim();
    assert.match(key, /^[A-Za-z0-9+/]{43}=$/, "32 random bytes in base64");
    assert.equal((await Deno.stat(keyFile)).mode! & 0o777, 0o600);

    const second = await startService({ DATA_DIR: dataDir }, { viaTask: true });
    assert.equal(await login(second.url, "persist@example.com"), 200, "the account survived the restart");
    assert.equal(await second.stop(), 0);
    assert.equal((await Deno.readTextFile(keyFile)).trim(), key, "the same key on every start");
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("with DATABASE_URL and no ENCRYPTION_KEY, start-up refuses with a message naming it", async () => {
  const out = await new Deno.Command("deno", {
    args: ["task", "--quiet", "start"],
    cwd: ROOT,
    env: { DATABASE_URL: TEST_DATABASE_URL, PORT: "0" },
    stdout: "null",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 2);
  assert.match(new TextDecoder().decode(out.stderr), /ENCRYPTION_KEY is required with DATABASE_URL/);
});

Deno.test("deno task start on PostgreSQL: two instances start together and share data", async () => {
  const schema = `t_start_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const admin = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE SCHEMA ${schema}`);
  // postgres.js passes unknown URL parameters on as connection parameters.
  const env = {
    DATABASE_URL: `${TEST_DATABASE_URL}?search_path=${schema}`,
    ENCRYPTION_KEY: "q0bHbPAwQzZ2hHkTqV8C7nqvC2oZ6bQjS7n9Xgq2wXo=",
  };
  try {
    const [a, b] = await Promise.all([
      startService(env, { viaTask: true }),
      startService(env, { viaTask: true }),
    ]);
    assert.equal(await register(a.url, "shared@example.com"), 201);
    assert.equal(await login(b.url, "shared@example.com"), 200);
    assert.equal(await a.stop(), 0);
    assert.equal(await b.stop(), 0);
    const c = await startService(env, { viaTask: true });
    assert.equal(await login(c.url, "shared@example.com"), 200, "data survived the restart");
    assert.equal(await c.stop(), 0);
    const applied = await admin.unsafe(`SELECT count(*)::int AS n FROM ${schema}.schema_migrations`);
    assert.ok(applied[0]!.n >= 1);
  } finally {
    await admin.unsafe(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  }
});

Deno.test("embedded database: a key that cannot open its check value is refused with one line naming ENCRYPTION_KEY", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "inbox-key-" });
  const keyFile = `${dataDir}/encryption.key`;
  const refused = async (env: Record<string, string>) => {
    const out = await runServiceToExit({ DATA_DIR: dataDir, ...env });
    assert.equal(out.code, 2, out.stderr);
    assert.doesNotMatch(out.stderr + out.stdout, /^\s*at /m, "no stack trace");
    return out.stderr.trim();
  };
  try {
    const first = await startService({ DATA_DIR: dataDir });
    assert.equal(await first.stop(), 0);
    const key = await Deno.readTextFile(keyFile);

    assert.equal(
      await refused({ ENCRYPTION_KEY: "ZHVfmSdHTqN3ZUeUpPkqwKkL2yGZ1R4Uo8Ig0xg0G6w=" }),
      "ENCRYPTION_KEY cannot decrypt the webhook secrets stored in this database: start with the key they were encrypted with",
    );

    // The key file lost: a new key is not the database's; the one generated is not left behind either.
    await Deno.remove(keyFile);
    assert.equal(
      await refused({}),
      `ENCRYPTION_KEY is unset and ${keyFile} is missing, but this database was set up with another key: set ENCRYPTION_KEY to that key, or put it back in ${keyFile}`,
    );
    await assert.rejects(Deno.stat(keyFile), Deno.errors.NotFound);

    // Another key in the file.
    await Deno.writeTextFile(keyFile, "ZHVfmSdHTqN3ZUeUpPkqwKkL2yGZ1R4Uo8Ig0xg0G6w=\n");
    assert.equal(
      await refused({}),
      `ENCRYPTION_KEY is unset and the key in ${keyFile} cannot decrypt the webhook secrets stored in this database: set ENCRYPTION_KEY to the key they were encrypted with, or put that key back in ${keyFile}`,
    );

    // The right key, from the file or from ENCRYPTION_KEY.
    await Deno.writeTextFile(keyFile, key);
    const fromFile = await startService({ DATA_DIR: dataDir });
    assert.equal(await fromFile.stop(), 0);
    const fromEnv = await startService({ DATA_DIR: dataDir, ENCRYPTION_KEY: key.trim() });
    assert.equal(await fromEnv.stop(), 0);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});
