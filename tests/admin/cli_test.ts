import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../../src/admin/cli.ts";

interface CliResult {
  code: number;
  out: string;
  err: string;
}

/** Runs the CLI in-process against the embedded database in `dataDir`. */
async function run(dataDir: string, ...args: string[]): Promise<CliResult> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(args, { DATA_DIR: dataDir }, (l) => out.push(l), (l) => err.push(l));
  return { code, out: out.join("\n"), err: err.join("\n") };
}

function assertAccountJson(text: string): { id: string; email: string; plan: string; createdAt: string } {
  const account = JSON.parse(text);
  assert.deepEqual(Object.keys(account).sort(), ["createdAt", "email", "id", "plan"]);
  assert.match(account.id, /^acc_/);
  assert.ok(!Number.isNaN(Date.parse(account.createdAt)));
  return account;
}

Deno.test("admin CLI on the embedded database", async (t) => {
  const dataDir = await Deno.makeTempDir({ prefix: "admin_cli_" });
  try {
    await t.step("help prints usage and exits 0", async () => {
      const r = await run(dataDir, "help");
      assert.equal(r.code, 0);
      assert.match(r.out, /Usage: deno task admin <command>/);
      assert.match(r.out, /create-account/);
      assert.equal(r.err, "");
    });

    await t.step("bad usage prints usage to stderr and exits 2", async () => {
      for (const args of [[], ["frobnicate"], ["show"], ["set-plan", "x"], ["create-account", "--bogus"]]) {
        const r = await run(dataDir, ...args);
        assert.equal(r.code, 2, `args ${JSON.stringify(args)}`);
        assert.match(r.err, /Usage: deno task admin/);
        assert.equal(r.out, "");
      }
      const missing = await run(dataDir, "create-account", "--email", "a@example.com");
      assert.equal(missing.code, 2);
      assert.match(missing.err, /--password/);
    });

    await t.step("invalid inputs exit 1 with one clear line", async () => {
      const plan = await run(
        dataDir,
        "create-account",
        "--email",
        "a@example.com",
        "--password",
        "long enough",
        "--plan",
        "gold",
      );
      assert.equal(plan.code, 1);
      assert.equal(plan.err, 'Invalid plan "gold": expected one of free, pro, business');

      const email = await run(dataDir, "create-account", "--email", "not-an-email", "--password", "long enough");
      assert.equal(email.code, 1);
      assert.equal(email.err, "Invalid email address: not-an-email");

      const password = await run(dataDir, "create-account", "--email", "a@example.com", "--password", "s3cr");
      assert.equal(password.code, 1);
      assert.equal(password.err, "Password must be 8 to 256 characters");

      const setPlan = await run(dataDir, "set-plan", "acc_x", "enterprise");
      assert.equal(setPlan.code, 1);
      assert.match(setPlan.err, /^Invalid plan "enterprise"/);
    });

    let id = "";
    await t.step("create-account prints the account, free by default, without the hash", async () => {
      const r = await run(dataDir, "create-account", "--email", "Ops@Example.com", "--password", "correct horse");
      assert.equal(r.code, 0, r.err);
      const account = assertAccountJson(r.out);
      assert.equal(account.email, "Ops@Example.com");
      assert.equal(account.plan, "free");
      assert.doesNotMatch(r.out, /scrypt|correct horse/);
      id = account.id;

      const pro = await run(
        dataDir,
        "create-account",
        "--email",
        "pro@example.com",
        "--password",
        "x".repeat(8),
        "--plan",
        "pro",
      );
      assert.equal(pro.code, 0, pro.err);
      assert.equal(assertAccountJson(pro.out).plan, "pro");
    });

    await t.step("show finds the account by id and by email, case-insensitively", async () => {
      const byId = await run(dataDir, "show", id);
      assert.equal(byId.code, 0, byId.err);
      assert.equal(assertAccountJson(byId.out).id, id);

      const byEmail = await run(dataDir, "show", "ops@example.COM");
      assert.equal(byEmail.code, 0, byEmail.err);
      assert.equal(byEmail.out, byId.out);
      assert.doesNotMatch(byEmail.out, /scrypt|passwordHash/);
    });

    await t.step("set-plan by id and by email", async () => {
      const byId = await run(dataDir, "set-plan", id, "business");
      assert.equal(byId.code, 0, byId.err);
      assert.equal(assertAccountJson(byId.out).plan, "business");

      const byEmail = await run(dataDir, "set-plan", "OPS@example.com", "pro");
      assert.equal(byEmail.code, 0, byEmail.err);
      const account = assertAccountJson(byEmail.out);
      assert.equal(account.id, id);
      assert.equal(account.plan, "pro");

      const shown = await run(dataDir, "show", id);
      assert.equal(assertAccountJson(shown.out).plan, "pro");
    });

    await t.step("a duplicate email (any case) exits 1 with the API's message", async () => {
      const r = await run(dataDir, "create-account", "--email", "ops@EXAMPLE.com", "--password", "another one");
      assert.equal(r.code, 1);
      assert.equal(r.err, "An account with this email already exists");
      assert.equal(r.out, "");
    });

    await t.step("an unknown account exits 1 with Account not found", async () => {
      for (const args of [["show", "acc_nope"], ["show", "nobody@example.com"], ["set-plan", "acc_nope", "pro"]]) {
        const r = await run(dataDir, ...args);
        assert.equal(r.code, 1, `args ${JSON.stringify(args)}`);
        assert.equal(r.err, "Account not found");
        assert.equal(r.out, "");
      }
      const byEmail = await run(dataDir, "set-plan", "nobody@example.com", "pro");
      assert.equal(byEmail.code, 1);
      assert.equal(byEmail.err, "Account not found");
    });

    await t.step("a data directory held by another process exits 1 with a clear message", async () => {
      // The same lock a running server holds on DATA_DIR.
      const lock = await Deno.open(join(dataDir, ".lock"), { create: true, write: true });
      try {
        await lock.lock(true);
        const r = await run(dataDir, "show", id);
        assert.equal(r.code, 1);
        assert.match(r.err, /^DATA_DIR: another process is using the embedded database in /);
        assert.equal(r.out, "");
      } finally {
        await lock.unlock();
        lock.close();
      }
    });
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("deno task admin runs as its own process and its data persists", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "admin_cli_proc_" });
  const task = async (...args: string[]): Promise<CliResult> => {
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["task", "admin", ...args],
      cwd: new URL("../../", import.meta.url),
      // An inherited DATABASE_URL would send the CLI to some other database.
      env: { DATA_DIR: dataDir, DATABASE_URL: "", NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const decoder = new TextDecoder();
    return { code: output.code, out: decoder.decode(output.stdout), err: decoder.decode(output.stderr) };
  };
  try {
    const created = await task(
      "create-account",
      "--email",
      "proc@example.com",
      "--password",
      "correct horse",
      "--plan",
      "business",
    );
    assert.equal(created.code, 0, created.err);
    const account = assertAccountJson(created.out.trim());
    assert.equal(account.email, "proc@example.com");
    assert.equal(account.plan, "business");

    const shown = await task("show", "proc@example.com");
    assert.equal(shown.code, 0, shown.err);
    assert.deepEqual(assertAccountJson(shown.out.trim()), account);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});
