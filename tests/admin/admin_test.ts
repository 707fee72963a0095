import assert from "node:assert/strict";
import { expectError } from "../_helpers/expect.ts";
import { loadConfig } from "../../src/config.ts";
import { createTestDb } from "../_helpers/db.ts";
import { ADMIN_TOKEN, startApp, type TestApp } from "../_helpers/app.ts";

Deno.test("operator API", async (t) => {
  const db = await createTestDb();
  const apps: TestApp[] = [];
  try {
    await t.step("without ADMIN_TOKEN every /admin path is 404", async () => {
      const app = await startApp(db.sql, { config: loadConfig({ COOKIE_SECURE: "false" }) });
      apps.push(app);
      const attempts: [string, RequestInit & { json?: unknown; auth?: string }][] = [
        ["/admin/accounts", { method: "POST", json: { email: "a@example.com", password: "long enough", plan: "pro" } }],
        ["/admin/accounts", {
          method: "POST",
          json: { email: "a@example.com", password: "long enough", plan: "pro" },
          auth: ADMIN_TOKEN,
        }],
        ["/admin/accounts/x", { method: "PATCH", json: { plan: "pro" }, auth: ADMIN_TOKEN }],
        ["/admin/accounts?email=a@example.com", { method: "GET", auth: ADMIN_TOKEN }],
        ["/admin/anything", { method: "GET" }],
        ["/admin", { method: "GET" }],
      ];
      for (const [path, init] of attempts) {
        const body = await expectError(await app.request(path, init), 404, "NOT_FOUND");
        assert.equal(body.error, "Not found");
      }
      const count = await db.sql`SELECT count(*)::int AS n FROM accounts`;
      assert.equal(count[0]?.n, 0);
    });

    const app = await startApp(db.sql);
    apps.push(app);
    const create = (json: unknown, auth: string | null = ADMIN_TOKEN) =>
      app.request("/admin/accounts", { method: "POST", json, ...(auth ? { auth } : {}) });

    await t.step("no bearer or a wrong bearer is 401", async () => {
      const valid = { email: "nobody@example.com", password: "long enough", plan: "pro" };
      await expectError(await create(valid, null), 401, "UNAUTHORIZED");
      await expectError(await create(valid, "wrong-token-0123456789"), 401, "UNAUTHORIZED");
      await expectError(await create(valid, ADMIN_TOKEN + "x"), 401, "UNAUTHORIZED");
      await expectError(
        await app.request("/admin/accounts", {
          method: "POST",
          json: valid,
          headers: { authorization: `Basic ${btoa(`admin:${ADMIN_TOKEN}`)}` },
        }),
        401,
        "UNAUTHORIZED",
      );
      await expectError(
        await app.request("/admin/accounts/x", { method: "PATCH", json: { plan: "pro" } }),
        401,
        "UNAUTHORIZED",
      );
      await expectError(await app.request("/admin/accounts?email=nobody@example.com"), 401, "UNAUTHORIZED");
      const body = await expectError(await app.request("/admin/anything"), 401, "UNAUTHORIZED");
      assert.equal(body.error, "Unauthorized");
      const count = await db.sql`SELECT count(*)::int AS n FROM accounts`;
      assert.equal(count[0]?.n, 0);
    });

    let id = "";
    await t.step("creating an account is 201 with the account and no password", async () => {
      const res = await create({ email: "Op@Example.com", password: "correct horse", plan: "pro" });
      assert.equal(res.status, 201);
      const text = await res.text();
      const body = JSON.parse(text);
      assert.deepEqual(Object.keys(body).sort(), ["createdAt", "email", "id", "plan"]);
      assert.equal(body.email, "Op@Example.com");
      assert.equal(body.plan, "pro");
      assert.match(body.id, /^acc_/);
      assert.ok(!Number.isNaN(Date.parse(body.createdAt)));
      assert.doesNotMatch(text, /correct horse|scrypt|password/i);
      id = body.id;

      // The operator's password works for the user.
      const login = await app.request("/api/auth/login", {
        method: "POST",
        json: { email: "op@example.com", password: "correct horse" },
      });
      assert.equal(login.status, 200);
      assert.equal((await login.json()).plan, "pro");
    });

    await t.step(
      "GET /admin/accounts?email= finds the account, ignoring case; an unknown email is an empty list",
      async () => {
        const find = (query: string) => app.request(`/admin/accounts${query}`, { auth: ADMIN_TOKEN });
        const res = await find(`?email=${encodeURIComponent("OP@example.COM")}`);
        assert.equal(res.status, 200);
        const text = await res.text();
        const body = JSON.parse(text);
        assert.deepEqual(Object.keys(body), ["data"]);
        assert.equal(body.data.length, 1);
        assert.deepEqual(Object.keys(body.data[0]).sort(), ["createdAt", "email", "id", "plan"]);
        assert.equal(body.data[0].id, id);
        assert.equal(body.data[0].email, "Op@Example.com");
        assert.equal(body.data[0].plan, "pro");
        assert.doesNotMatch(text, /scrypt|password/i);

        assert.deepEqual(await (await find("?email=nobody@example.com")).json(), { data: [] });
        await expectError(await find(""), 400, "VALIDATION_ERROR");
        await expectError(await find("?email="), 400, "VALIDATION_ERROR");
      },
    );

    await t.step("a duplicate email is 400 EMAIL_TAKEN", async () => {
      const body = await expectError(
        await create({ email: "OP@example.com", password: "other password", plan: "free" }),
        400,
        "EMAIL_TAKEN",
      );
      assert.equal(body.error, "An account with this email already exists");
    });

    await t.step("an invalid plan is 400 VALIDATION_ERROR with details", async () => {
      const body = await expectError(
        await create({ email: "new@example.com", password: "long enough", plan: "gold" }),
        400,
        "VALIDATION_ERROR",
      );
      assert.ok(body.details?.some((d) => d.path === "plan"), JSON.stringify(body));

      const missing = await expectError(await create({ email: "new@example.com" }), 400, "VALIDATION_ERROR");
      const paths = missing.details?.map((d) => d.path) ?? [];
      assert.ok(paths.includes("password") && paths.includes("plan"), JSON.stringify(missing));
    });

    await t.step("an unknown field is 400", async () => {
      const body = await expectError(
        await create({ email: "new@example.com", password: "long enough", plan: "pro", admin: true }),
        400,
        "VALIDATION_ERROR",
      );
      assert.deepEqual(body.details?.find((d) => d.path === "admin"), { path: "admin", message: "Unknown field" });
    });

    await t.step("PATCH sets the plan", async () => {
      const res = await app.request(`/admin/accounts/${id}`, {
        method: "PATCH",
        json: { plan: "business" },
        auth: ADMIN_TOKEN,
      });
      assert.equal(res.status, 200);
      const body = await res.json();
      assert.deepEqual(Object.keys(body).sort(), ["createdAt", "email", "id", "plan"]);
      assert.equal(body.id, id);
      assert.equal(body.plan, "business");
      const rows = await db.sql`SELECT plan FROM accounts WHERE id = ${id}`;
      assert.equal(rows[0]?.plan, "business");

      const invalid = await app.request(`/admin/accounts/${id}`, {
        method: "PATCH",
        json: { plan: "platinum" },
        auth: ADMIN_TOKEN,
      });
      await expectError(invalid, 400, "VALIDATION_ERROR");
      const extra = await app.request(`/admin/accounts/${id}`, {
        method: "PATCH",
        json: { plan: "free", email: "x@example.com" },
        auth: ADMIN_TOKEN,
      });
      await expectError(extra, 400, "VALIDATION_ERROR");
    });

    await t.step("PATCH of an unknown id is 404 ACCOUNT_NOT_FOUND", async () => {
      const res = await app.request("/admin/accounts/acc_doesnotexist", {
        method: "PATCH",
        json: { plan: "pro" },
        auth: ADMIN_TOKEN,
      });
      const body = await expectError(res, 404, "ACCOUNT_NOT_FOUND");
      assert.equal(body.error, "Account not found");
    });

    await t.step("a non-JSON body is 415", async () => {
      const res = await app.request("/admin/accounts", {
        method: "POST",
        auth: ADMIN_TOKEN,
        headers: { "content-type": "text/plain" },
        body: JSON.stringify({ email: "plain@example.com", password: "long enough", plan: "pro" }),
      });
      await expectError(res, 415, "UNSUPPORTED_MEDIA_TYPE");
      const form = await app.request(`/admin/accounts/${id}`, {
        method: "PATCH",
        auth: ADMIN_TOKEN,
        body: new URLSearchParams({ plan: "free" }),
      });
      await expectError(form, 415, "UNSUPPORTED_MEDIA_TYPE");
    });

    await t.step("malformed JSON is 400", async () => {
      const res = await app.request("/admin/accounts", {
        method: "POST",
        auth: ADMIN_TOKEN,
        headers: { "content-type": "application/json" },
        body: '{"email": "x@example.com",',
      });
      await expectError(res, 400, "VALIDATION_ERROR");
    });
  } finally {
    for (const app of apps) await app.close();
    await db.close();
  }
});
