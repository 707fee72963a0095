import assert from "node:assert/strict";
import { expectError } from "../_helpers/expect.ts";
import { loadConfig } from "../../src/config.ts";
import { ManualClock } from "../../src/shared/clock.ts";
import { sha256Hex } from "../../src/shared/crypto.ts";
import { createTestDb } from "../_helpers/db.ts";
import { ADMIN_TOKEN, sessionCookieOf, startApp, type TestApp } from "../_helpers/app.ts";

const PASSWORD = "correct horse battery";
const DAY_MS = 86_400_000;

/** The raw `Set-Cookie` of the session cookie. */
function sessionSetCookie(res: Response): string {
  const header = res.headers.getSetCookie().find((c) => c.startsWith("session="));
  assert.ok(header, "expected a session Set-Cookie");
  return header;
}

/** The attributes of a Set-Cookie, lower-cased, without the name=value pair. */
function cookieAttributes(setCookie: string): string[] {
  return setCookie.split(";").slice(1).map((a) => a.trim().toLowerCase());
}

let emailCounter = 0;
function uniqueEmail(): string {
  return `auth${++emailCounter}-${crypto.randomUUID().slice(0, 8)}@example.com`;
}

Deno.test("accounts and sessions", async (t) => {
  const db = await createTestDb();
  const apps: TestApp[] = [];
  const start = async (opts: Parameters<typeof startApp>[1] = {}) => {
    const app = await startApp(db.sql, opts);
    apps.push(app);
    return app;
  };
  try {
    const app = await start();
    const register = (json: unknown, target: TestApp = app) =>
      target.request("/api/auth/register", { method: "POST", json });
    const login = (json: unknown) => app.request("/api/auth/login", { method: "POST", json });
    const me = (init: { cookie?: string; auth?: string } = {}) => app.request("/api/me", init);

    const email = uniqueEmail();
    let cookie = "";
    let accountId = "";

    await t.step("register is 201 on the free plan with an HttpOnly, SameSite=Lax cookie", async () => {
      const res = await register({ email, password: PASSWORD });
      assert.equal(res.status, 201);
      const text = await res.text();
      const body = JSON.parse(text);
      assert.deepEqual(Object.keys(body).sort(), ["createdAt", "email", "id", "plan"]);
      assert.equal(body.email, email);
      assert.equal(body.plan, "free");
      assert.doesNotMatch(text, /scrypt|correct horse/);
      accountId = body.id;

      const setCookie = sessionSetCookie(res);
      assert.match(setCookie, /^session=[A-Za-z0-9_-]{40,};/);
      const attributes = cookieAttributes(setCookie);
      assert.ok(attributes.includes("httponly"), setCookie);
      assert.ok(attributes.includes("samesite=lax"), setCookie);
      assert.ok(attributes.includes("path=/"), setCookie);
      // COOKIE_SECURE=false in the test configuration: plain-HTTP development.
      assert.ok(!attributes.includes("secure"), setCookie);
      cookie = sessionCookieOf(res);
    });

    await t.step("the cookie is Secure under the default configuration", async () => {
      const secureApp = await start({ config: loadConfig({ ADMIN_TOKEN }) });
      const res = await register({ email: uniqueEmail(), password: PASSWORD }, secureApp);
      assert.equal(res.status, 201);
      await res.body?.cancel();
      const attributes = cookieAttributes(sessionSetCookie(res));
      assert.ok(attributes.includes("secure"));
      assert.ok(attributes.includes("httponly"));
      assert.ok(attributes.includes("samesite=lax"));
    });

    await t.step("a duplicate email, in any case, is 400 EMAIL_TAKEN", async () => {
      const body = await expectError(
        await register({ email: email.toUpperCase(), password: "another password" }),
        400,
        "EMAIL_TAKEN",
      );
      assert.equal(body.error, "An account with this email already exists");
      const again = await register({ email, password: PASSWORD });
      assert.equal(again.headers.getSetCookie().length, 0);
      await expectError(again, 400, "EMAIL_TAKEN");
    });

    await t.step("registration input is validated", async () => {
      const short = await expectError(
        await register({ email: uniqueEmail(), password: "short" }),
        400,
        "VALIDATION_ERROR",
      );
      assert.ok(short.details?.some((d) => d.path === "password"), JSON.stringify(short));

      const badEmail = await expectError(
        await register({ email: "not-an-email", password: PASSWORD }),
        400,
        "VALIDATION_ERROR",
      );
      assert.ok(badEmail.details?.some((d) => d.path === "email"), JSON.stringify(badEmail));

      const unknown = await expectError(
        await register({ email: uniqueEmail(), password: PASSWORD, plan: "business" }),
        400,
        "VALIDATION_ERROR",
      );
      assert.deepEqual(unknown.details?.find((d) => d.path === "plan"), { path: "plan", message: "Unknown field" });

      await expectError(await register({}), 400, "VALIDATION_ERROR");
      await expectError(await register([]), 400, "VALIDATION_ERROR");
    });

    await t.step("GET /api/me answers the cookie's account, and 401 without a valid credential", async () => {
      const res = await me({ cookie });
      assert.equal(res.status, 200);
      const body = await res.json();
      assert.deepEqual(Object.keys(body).sort(), ["createdAt", "email", "id", "plan"]);
      assert.equal(body.id, accountId);
      assert.equal(body.email, email);
      assert.equal(body.plan, "free");

      const none = await me();
      assert.equal(none.status, 401);
      assert.deepEqual(await none.json(), { success: false, error: "Unauthorized", code: "UNAUTHORIZED" });

      await expectError(await me({ cookie: "session=garbage" }), 401, "UNAUTHORIZED");
      await expectError(await me({ cookie: `session=${"x".repeat(500)}` }), 401, "UNAUTHORIZED");
      await expectError(await me({ cookie: "other=1" }), 401, "UNAUTHORIZED");
    });

    await t.step("a bad bearer is 401 even beside a valid cookie", async () => {
      await expectError(await me({ cookie, auth: "garbage" }), 401, "UNAUTHORIZED");
      await expectError(
        await app.request("/api/me", { cookie, headers: { authorization: "Basic Zm9vOmJhcg==" } }),
        401,
        "UNAUTHORIZED",
      );
    });

    let loginCookie = "";
    await t.step("login is 200 with a new session cookie", async () => {
      const res = await login({ email: email.toUpperCase(), password: PASSWORD });
      assert.equal(res.status, 200);
      const body = await res.json();
      assert.equal(body.id, accountId);
      const attributes = cookieAttributes(sessionSetCookie(res));
      assert.ok(attributes.includes("httponly") && attributes.includes("samesite=lax"));
      loginCookie = sessionCookieOf(res);
      assert.notEqual(loginCookie, cookie);

      const check = await me({ cookie: loginCookie });
      assert.equal(check.status, 200);
      assert.equal((await check.json()).id, accountId);
    });

    await t.step("wrong password and unknown email are the same 401", async () => {
      const wrong = await login({ email, password: "wrong password" });
      assert.equal(wrong.headers.getSetCookie().length, 0);
      const wrongBody = await expectError(wrong, 401, "INVALID_CREDENTIALS");
      const unknownBody = await expectError(
        await login({ email: uniqueEmail(), password: PASSWORD }),
        401,
        "INVALID_CREDENTIALS",
      );
      assert.deepEqual(unknownBody, wrongBody);
    });

    await t.step("logout ends the session", async () => {
      const res = await app.request("/api/auth/logout", { method: "POST", cookie: loginCookie });
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { success: true });
      const cleared = sessionSetCookie(res);
      assert.match(cleared, /^session=;/);
      assert.ok(cookieAttributes(cleared).includes("max-age=0"), cleared);

      await expectError(await me({ cookie: loginCookie }), 401, "UNAUTHORIZED");
      // Only that session: the one from registration still works.
      const other = await me({ cookie });
      assert.equal(other.status, 200);
      await other.body?.cancel();

      // Logging out without a session is harmless.
      const anonymous = await app.request("/api/auth/logout", { method: "POST" });
      assert.equal(anonymous.status, 200);
      await anonymous.body?.cancel();
    });

    await t.step("a session expires after SESSION_TTL_DAYS", async () => {
      const clock = new ManualClock();
      const timed = await start({ clock, env: { SESSION_TTL_DAYS: "2" } });
      const res = await register({ email: uniqueEmail(), password: PASSWORD }, timed);
      assert.equal(res.status, 201);
      await res.body?.cancel();
      assert.ok(cookieAttributes(sessionSetCookie(res)).includes(`max-age=${2 * 86_400}`));
      const session = sessionCookieOf(res);

      clock.advance(2 * DAY_MS - 60_000);
      const live = await timed.request("/api/me", { cookie: session });
      assert.equal(live.status, 200);
      await live.body?.cancel();

      clock.advance(60_000);
      await expectError(await timed.request("/api/me", { cookie: session }), 401, "UNAUTHORIZED");
    });

    await t.step("the database stores only digests of session tokens and scrypt hashes of passwords", async () => {
      const token = cookie.slice("session=".length);
      const rows = await db.sql<{ tokenHash: string }[]>`SELECT token_hash FROM sessions`;
      assert.ok(rows.length > 0);
      assert.ok(rows.every((r) => !r.tokenHash.includes(token)));
      const digest = await sha256Hex(token);
      assert.ok(rows.some((r) => r.tokenHash === digest), "the session's digest is stored");

      const accounts = await db.sql<{ passwordHash: string }[]>`
        SELECT password_hash FROM accounts WHERE id = ${accountId}`;
      const hash = accounts[0]?.passwordHash ?? "";
      assert.match(hash, /^scrypt\$\d+\$\d+\$\d+\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
      assert.ok(!hash.includes(PASSWORD));
    });

    await t.step("only JSON bodies are accepted: 415 otherwise", async () => {
      const res = await app.request("/api/auth/register", {
        method: "POST",
        body: JSON.stringify({ email: uniqueEmail(), password: PASSWORD }),
      });
      assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
      await expectError(res, 415, "UNSUPPORTED_MEDIA_TYPE");
      const form = await app.request("/api/auth/login", {
        method: "POST",
        body: new URLSearchParams({ email, password: PASSWORD }),
      });
      await expectError(form, 415, "UNSUPPORTED_MEDIA_TYPE");
    });

    await t.step("a body over MAX_BODY_BYTES is 413", async () => {
      const small = await start({ env: { MAX_BODY_BYTES: "2048" } });
      const res = await small.request("/api/auth/register", {
        method: "POST",
        json: { email: uniqueEmail(), password: "p".repeat(4096) },
      });
      await expectError(res, 413, "PAYLOAD_TOO_LARGE");

      // A streamed body declares no length and must be cut off all the same.
      const chunk = new TextEncoder().encode(`{"email":"a@example.com","password":"${"p".repeat(4096)}"}`);
      const streamed = await fetch(small.baseUrl + "/api/auth/register", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: new ReadableStream({
          start(controller) {
            controller.enqueue(chunk);
            controller.close();
          },
        }),
      });
      await expectError(streamed, 413, "PAYLOAD_TOO_LARGE");
    });

    await t.step("malformed JSON is 400 VALIDATION_ERROR", async () => {
      for (const body of ['{"email": ', "not json", ""]) {
        const res = await app.request("/api/auth/login", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body,
        });
        await expectError(res, 400, "VALIDATION_ERROR");
      }
    });

    await t.step("a plan change by the operator shows on /api/me at once", async () => {
      const res = await app.request(`/admin/accounts/${accountId}`, {
        method: "PATCH",
        json: { plan: "business" },
        auth: ADMIN_TOKEN,
      });
      assert.equal(res.status, 200);
      await res.body?.cancel();
      const after = await me({ cookie });
      assert.equal(after.status, 200);
      assert.equal((await after.json()).plan, "business");
    });
  } finally {
    for (const app of apps) await app.close();
    await db.close();
  }
});
