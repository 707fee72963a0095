/** Accounts and sessions: register, login, logout, /api/me, cookies, storage. Each test on a fresh harness. */
import assert from "node:assert/strict";
import { expectError } from "../_helpers/expect.ts";
import { loadConfig } from "../../src/config.ts";
import { sha256Hex } from "../../src/shared/crypto.ts";
import { ADMIN_TOKEN, type Api, sessionCookieOf, sessionSetCookieOf, type User } from "../_helpers/app.ts";
import { withService } from "../_helpers/harness.ts";
import { UNAUTHORIZED_HINTS } from "../../src/auth/hints.ts";

const PASSWORD = "correct horse battery";
const DAY_MS = 86_400_000;

/** The attributes of a Set-Cookie, lower-cased, without the name=value pair. */
function cookieAttributes(setCookie: string): string[] {
  return setCookie.split(";").slice(1).map((a) => a.trim().toLowerCase());
}

let emailCounter = 0;
function uniqueEmail(): string {
  return `auth${++emailCounter}-${crypto.randomUUID().slice(0, 8)}@example.com`;
}

const register = (app: Api, json: unknown) => app.request("/api/auth/register", { method: "POST", json });
const login = (app: Api, json: unknown) => app.request("/api/auth/login", { method: "POST", json });
const me = (app: Api, init: { cookie?: string; auth?: string } = {}) => app.request("/api/me", init);

/** Registers a new account with PASSWORD (free plan); returns its id, email and registration session. */
async function registered(app: Api): Promise<User> {
  const email = uniqueEmail();
  const res = await register(app, { email, password: PASSWORD });
  assert.equal(res.status, 201);
  const body = await res.json();
  return { id: body.id, email, cookie: sessionCookieOf(res) };
}

Deno.test("register is 201 on the free plan with an HttpOnly, SameSite=Lax cookie", async () => {
  await withService({}, async ({ app }) => {
    const email = uniqueEmail();
    const res = await register(app, { email, password: PASSWORD });
    assert.equal(res.status, 201);
    const text = await res.text();
    const body = JSON.parse(text);
    assert.deepEqual(Object.keys(body).sort(), ["createdAt", "email", "id", "plan"]);
    assert.equal(body.email, email);
    assert.equal(body.plan, "free");
    assert.doesNotMatch(text, /scrypt|correct horse/);

    const setCookie = sessionSetCookieOf(res);
    assert.match(setCookie, /^session=[A-Za-z0-9_-]{40,};/);
    const attributes = cookieAttributes(setCookie);
    assert.ok(attributes.includes("httponly"), setCookie);
    assert.ok(attributes.includes("samesite=lax"), setCookie);
    assert.ok(attributes.includes("path=/"), setCookie);
    // COOKIE_SECURE=false in the test configuration: plain-HTTP development.
    assert.ok(!attributes.includes("secure"), setCookie);
  });
});

Deno.test("the cookie is Secure under the default configuration", async () => {
  await withService({ config: loadConfig({ ADMIN_TOKEN }) }, async ({ app }) => {
    const res = await register(app, { email: uniqueEmail(), password: PASSWORD });
    assert.equal(res.status, 201);
    await res.body?.cancel();
    const attributes = cookieAttributes(sessionSetCookieOf(res));
    assert.ok(attributes.includes("secure"));
    assert.ok(attributes.includes("httponly"));
    assert.ok(attributes.includes("samesite=lax"));
  });
});

Deno.test("a duplicate email, in any case, is 400 EMAIL_TAKEN", async () => {
  await withService({}, async ({ app }) => {
    const { email } = await registered(app);
    const body = await expectError(
      await register(app, { email: email.toUpperCase(), password: "another password" }),
      400,
      "EMAIL_TAKEN",
    );
    assert.equal(body.error, "An account with this email already exists");
    const again = await register(app, { email, password: PASSWORD });
    assert.equal(again.headers.getSetCookie().length, 0);
    await expectError(again, 400, "EMAIL_TAKEN");
  });
});

Deno.test("registration input is validated", async () => {
  await withService({}, async ({ app }) => {
    const short = await expectError(
      await register(app, { email: uniqueEmail(), password: "short" }),
      400,
      "VALIDATION_ERROR",
    );
    assert.ok(short.details?.some((d) => d.path === "password"), JSON.stringify(short));

    const badEmail = await expectError(
      await register(app, { email: "not-an-email", password: PASSWORD }),
      400,
      "VALIDATION_ERROR",
    );
    assert.ok(badEmail.details?.some((d) => d.path === "email"), JSON.stringify(badEmail));

    const unknown = await expectError(
      await register(app, { email: uniqueEmail(), password: PASSWORD, plan: "business" }),
      400,
      "VALIDATION_ERROR",
    );
    assert.deepEqual(unknown.details?.find((d) => d.path === "plan"), { path: "plan", message: "Unknown field" });

    await expectError(await register(app, {}), 400, "VALIDATION_ERROR");
    await expectError(await register(app, []), 400, "VALIDATION_ERROR");
  });
});

Deno.test("GET /api/me answers the cookie's account, and 401 without a valid credential", async () => {
  await withService({}, async ({ app }) => {
    const account = await registered(app);
    const res = await me(app, { cookie: account.cookie });
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.deepEqual(Object.keys(body).sort(), ["createdAt", "email", "id", "plan"]);
    assert.equal(body.id, account.id);
    assert.equal(body.email, account.email);
    assert.equal(body.plan, "free");

    const none = await me(app);
    assert.equal(none.status, 401);
    assert.deepEqual(await none.json(), {
      success: false,
      error: "Unauthorized",
      code: "UNAUTHORIZED",
      hint: UNAUTHORIZED_HINTS.noCredential,
    });

    await expectError(await me(app, { cookie: "session=garbage" }), 401, "UNAUTHORIZED");
    await expectError(await me(app, { cookie: `session=${"x".repeat(500)}` }), 401, "UNAUTHORIZED");
    await expectError(await me(app, { cookie: "other=1" }), 401, "UNAUTHORIZED");
  });
});

Deno.test("a bad bearer is 401 even beside a valid cookie", async () => {
  await withService({}, async ({ app }) => {
    const { cookie } = await registered(app);
    await expectError(await me(app, { cookie, auth: "garbage" }), 401, "UNAUTHORIZED");
    await expectError(
      await app.request("/api/me", { cookie, headers: { authorization: "Basic Zm9vOmJhcg==" } }),
      401,
      "UNAUTHORIZED",
    );
  });
});

Deno.test("login is 200 with a new session cookie", async () => {
  await withService({}, async ({ app }) => {
    const account = await registered(app);
    const res = await login(app, { email: account.email.toUpperCase(), password: PASSWORD });
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.equal(body.id, account.id);
    const attributes = cookieAttributes(sessionSetCookieOf(res));
    assert.ok(attributes.includes("httponly") && attributes.includes("samesite=lax"));
    const loginCookie = sessionCookieOf(res);
    assert.notEqual(loginCookie, account.cookie);

    const check = await me(app, { cookie: loginCookie });
    assert.equal(check.status, 200);
    assert.equal((await check.json()).id, account.id);
  });
});

Deno.test("wrong password and unknown email are the same 401", async () => {
  await withService({}, async ({ app }) => {
    const { email } = await registered(app);
    const wrong = await login(app, { email, password: "wrong password" });
    assert.equal(wrong.headers.getSetCookie().length, 0);
    const wrongBody = await expectError(wrong, 401, "INVALID_CREDENTIALS");
    const unknownBody = await expectError(
      await login(app, { email: uniqueEmail(), password: PASSWORD }),
      401,
      "INVALID_CREDENTIALS",
    );
    assert.deepEqual(unknownBody, wrongBody);
  });
});

Deno.test("logout ends the session", async () => {
  await withService({}, async ({ app }) => {
    const account = await registered(app);
    const signedIn = await login(app, { email: account.email, password: PASSWORD });
    assert.equal(signedIn.status, 200);
    await signedIn.body?.cancel();
    const loginCookie = sessionCookieOf(signedIn);

    const res = await app.request("/api/auth/logout", { method: "POST", cookie: loginCookie });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { success: true });
    const cleared = sessionSetCookieOf(res);
    assert.match(cleared, /^session=;/);
    assert.ok(cookieAttributes(cleared).includes("max-age=0"), cleared);

    await expectError(await me(app, { cookie: loginCookie }), 401, "UNAUTHORIZED");
    // Only that session: the one from registration still works.
    const other = await me(app, { cookie: account.cookie });
    assert.equal(other.status, 200);
    await other.body?.cancel();

    // Logging out without a session is harmless.
    const anonymous = await app.request("/api/auth/logout", { method: "POST" });
    assert.equal(anonymous.status, 200);
    await anonymous.body?.cancel();
  });
});

Deno.test("a session expires after SESSION_TTL_DAYS", async () => {
  await withService({ env: { SESSION_TTL_DAYS: "2" } }, async ({ app, clock }) => {
    const res = await register(app, { email: uniqueEmail(), password: PASSWORD });
    assert.equal(res.status, 201);
    await res.body?.cancel();
    assert.ok(cookieAttributes(sessionSetCookieOf(res)).includes(`max-age=${2 * 86_400}`));
    const session = sessionCookieOf(res);

    clock.advance(2 * DAY_MS - 60_000);
    const live = await me(app, { cookie: session });
    assert.equal(live.status, 200);
    await live.body?.cancel();

    clock.advance(60_000);
    await expectError(await me(app, { cookie: session }), 401, "UNAUTHORIZED");
  });
});

Deno.test("the database stores only digests of session tokens and scrypt hashes of passwords", async () => {
  await withService({}, async ({ app, db }) => {
    const account = await registered(app);
    const token = account.cookie.slice("session=".length);
    const rows = await db.sql<{ tokenHash: string }[]>`SELECT token_hash FROM sessions`;
    assert.ok(rows.length > 0);
    assert.ok(rows.every((r) => !r.tokenHash.includes(token)));
    const digest = await sha256Hex(token);
    assert.ok(rows.some((r) => r.tokenHash === digest), "the session's digest is stored");

    const accounts = await db.sql<{ passwordHash: string }[]>`
      SELECT password_hash FROM accounts WHERE id = ${account.id}`;
    const hash = accounts[0]?.passwordHash ?? "";
    assert.match(hash, /^scrypt\$\d+\$\d+\$\d+\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    assert.ok(!hash.includes(PASSWORD));
  });
});

Deno.test("only JSON bodies are accepted: 415 otherwise", async () => {
  await withService({}, async ({ app }) => {
    const { email } = await registered(app);
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
});

Deno.test("a body over MAX_BODY_BYTES is 413", async () => {
  await withService({ env: { MAX_BODY_BYTES: "2048" } }, async ({ app: small }) => {
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
});

Deno.test("malformed JSON is 400 VALIDATION_ERROR", async () => {
  await withService({}, async ({ app }) => {
    for (const body of ['{"email": ', "not json", ""]) {
      const res = await app.request("/api/auth/login", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      await expectError(res, 400, "VALIDATION_ERROR");
    }
  });
});

Deno.test("a plan change by the operator shows on /api/me at once", async () => {
  await withService({}, async ({ app }) => {
    const account = await registered(app);
    const res = await app.request(`/admin/accounts/${account.id}`, {
      method: "PATCH",
      json: { plan: "business" },
      auth: ADMIN_TOKEN,
    });
    assert.equal(res.status, 200);
    await res.body?.cancel();
    const after = await me(app, { cookie: account.cookie });
    assert.equal(after.status, 200);
    assert.equal((await after.json()).plan, "business");
  });
});
