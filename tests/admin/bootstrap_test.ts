/**
 * Bootstrap in one step: `deno task admin create-api-key` as its own process
 * against a PostgreSQL schema prints a key, and that key works over HTTP
 * against a service on the same schema.
 */
import assert from "node:assert/strict";
import { ADMIN_TOKEN, apiAt, startApp } from "../_helpers/app.ts";
import { createTestDb, type TestDb } from "../_helpers/db.ts";
import { serviceEnv } from "../_helpers/process.ts";

interface TaskResult {
  code: number;
  out: string;
  err: string;
}

/** `deno task admin ...` as a user types it, on the test schema. */
async function admin(db: TestDb, ...args: string[]): Promise<TaskResult> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["task", "--quiet", "admin", ...args],
    cwd: new URL("../../", import.meta.url),
    env: { ...serviceEnv(db), NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return { code: output.code, out: decoder.decode(output.stdout), err: decoder.decode(output.stderr) };
}

Deno.test("deno task admin create-api-key prints a key that works against /api/me", async (t) => {
  const db = await createTestDb();
  const app = await startApp(db.sql);
  const api = apiAt(app.baseUrl);
  try {
    await t.step("a missing account is a clear error without --create", async () => {
      const r = await admin(db, "create-api-key", "--email", "boot@example.com");
      assert.equal(r.code, 1);
      assert.equal(r.out, "");
      assert.equal(r.err.trim(), "No account with the email boot@example.com (add --create to make one)");
    });

    let first = "";
    await t.step("--create makes the account on business and prints only the key", async () => {
      const r = await admin(db, "create-api-key", "--email", "boot@example.com", "--create");
      assert.equal(r.code, 0, r.err);
      first = r.out.trim();
      assert.match(first, /^isk_[A-Za-z0-9_-]+$/);
      assert.equal(r.out, `${first}\n`, "stdout is the key alone");
      assert.match(r.err, /^Created account acc_\w+ \(boot@example\.com\) on the business plan\./m);
      assert.match(r.err, /^Created API key key_\w+ \("admin-cli", isk_\w+\.\.\.\) for boot@example\.com/m);
      assert.ok(!r.err.includes(first), "the key is printed once, on stdout only");

      const me = await api.request("/api/me", { auth: first });
      assert.equal(me.status, 200);
      const body = await me.json();
      assert.equal(body.email, "boot@example.com");
      assert.equal(body.plan, "business");

      // The operator finds the new account by its email.
      const found = await api.request("/admin/accounts?email=BOOT@example.com", { auth: ADMIN_TOKEN });
      assert.equal((await found.json()).data[0].id, body.id);
    });

    await t.step("an existing account gets another key, named by --name", async () => {
      const r = await admin(db, "create-api-key", "--email", "Boot@Example.com", "--name", "ci runner");
      assert.equal(r.code, 0, r.err);
      const second = r.out.trim();
      assert.notEqual(second, first);
      assert.doesNotMatch(r.err, /Created account/);
      const keys = await api.request("/api/api-keys", { auth: second });
      assert.equal(keys.status, 200);
      assert.deepEqual((await keys.json()).map((k: { name: string }) => k.name).sort(), ["admin-cli", "ci runner"]);
      // --create on an existing account makes no second account.
      const again = await admin(db, "create-api-key", "--email", "boot@example.com", "--create");
      assert.equal(again.code, 0, again.err);
      assert.doesNotMatch(again.err, /Created account/);
      const accounts = await db.sql`SELECT count(*)::int AS n FROM accounts`;
      assert.equal(accounts[0]!.n, 1);
    });

    await t.step("a free account gets no key, with the way out in the message", async () => {
      const created = await api.request("/admin/accounts", {
        method: "POST",
        json: { email: "free@example.com", password: "long enough", plan: "free" },
        auth: ADMIN_TOKEN,
      });
      assert.equal(created.status, 201);
      await created.body?.cancel();
      const r = await admin(db, "create-api-key", "--email", "free@example.com", "--create");
      assert.equal(r.code, 1);
      assert.equal(r.out, "");
      assert.equal(
        r.err.trim(),
        "API keys need the pro or business plan; free@example.com is on free (deno task admin set-plan free@example.com pro)",
      );
    });

    await t.step("usage mistakes exit 2", async () => {
      const noEmail = await admin(db, "create-api-key", "--create");
      assert.equal(noEmail.code, 2);
      assert.match(noEmail.err, /^create-api-key needs --email\./);
      const stray = await admin(db, "create-api-key", "--email", "x@example.com", "--password", "long enough");
      assert.equal(stray.code, 2);
      assert.match(stray.err, /^--password only goes with --create/);
    });
  } finally {
    await app.close();
    await db.close();
  }
});

Deno.test("README's walkthrough leads with the one-step bootstrap, and its command works as written", async () => {
  const readme = await Deno.readTextFile(new URL("../../README.md", import.meta.url));
  const from = readme.indexOf("## Five minutes with it");
  const section = readme.slice(from, readme.indexOf("\n## ", from + 1));
  const first = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(first, "the walkthrough has a shell block");
  const [command, ...rest] = first.trim().split("\n");
  const args = command!.split(/\s+/);
  assert.deepEqual(args.slice(0, 3), ["deno", "task", "admin"], `the first step is the bootstrap: ${command}`);
  assert.ok(args.includes("create-api-key") && args.includes("--create"), command);
  assert.ok(rest.some((l) => /^\S.*deno task start$/.test(l)), "then the service is started");
  const byHand = await Deno.readTextFile(new URL("../../docs/api.md", import.meta.url));
  assert.ok(byHand.includes("/api/auth/register"), "the manual path is in docs/api.md, as the alternative");

  const db = await createTestDb();
  const app = await startApp(db.sql);
  try {
    const r = await admin(db, ...args.slice(3));
    assert.equal(r.code, 0, r.err);
    const key = r.out.trim();
    assert.equal(r.out, `${key}\n`, "stdout is the key alone");
    // The lines the README shows on stderr, with its placeholders for ids and the key's prefix.
    for (const shown of rest.filter((l) => l.startsWith("# Created")).map((l) => l.slice(2))) {
      const pattern = shown.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
        .replace(/(acc|key)_\\\.\\\.\\\./g, "$1_\\w+")
        .replace(/isk_AbCdEfGh/, "isk_[\\w-]+");
      assert.match(r.err, new RegExp(`^${pattern}$`, "m"), shown);
    }
    const me = await apiAt(app.baseUrl).request("/api/me", { auth: key });
    assert.equal(me.status, 200);
    await me.body?.cancel();
  } finally {
    await app.close();
    await db.close();
  }
});
