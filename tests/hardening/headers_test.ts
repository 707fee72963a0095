/**
 * Response headers of the security posture (design): `X-Content-Type-Options:
 * nosniff` on every response, `Cache-Control: no-store` on the responses that
 * carry a credential, and on /docs a Content-Security-Policy that allows only
 * the service's own origin and no framing. (tests/e2e/docs_test.ts proves in
 * Chromium that the page renders within that policy.)
 */
import assert from "node:assert/strict";
import { createTestDb } from "../_helpers/db.ts";
import { ADMIN_TOKEN, newUser, sessionCookieOf, startApp } from "../_helpers/app.ts";
import { rawRequest } from "./raw_http.ts";

Deno.test("every response carries X-Content-Type-Options: nosniff, errors and 404s included", async () => {
  const db = await createTestDb();
  const app = await startApp(db.sql);
  try {
    const user = await newUser(app, "free");
    const cases: Array<[string, string, RequestInit & { json?: unknown; auth?: string; cookie?: string }, number]> = [
      ["GET", "/healthz", {}, 200],
      ["GET", "/openapi.json", {}, 200],
      ["GET", "/openapi.yaml", {}, 200],
      ["GET", "/docs", {}, 200],
      ["GET", "/docs/scalar.js", {}, 200],
      ["GET", "/metrics", {}, 200],
      ["GET", "/nope", {}, 404],
      ["GET", "/api/me", {}, 401],
      ["GET", "/api/me", { cookie: user.cookie }, 200],
      ["GET", "/api/api-keys", { cookie: user.cookie }, 403],
      ["GET", "/api/inboxes/inb_unknown", { cookie: user.cookie }, 404],
      ["POST", "/api/inboxes", { json: { ttlSeconds: 1 }, cookie: user.cookie }, 400],
      [
        "POST",
        "/api/inboxes",
        { body: "{", headers: { "content-type": "application/json" }, cookie: user.cookie },
        400,
      ],
      ["POST", "/api/inboxes", { body: "x", headers: { "content-type": "text/plain" }, cookie: user.cookie }, 415],
      ["POST", "/admin/accounts", { json: {}, auth: "wrong-token-0123456789" }, 401],
      ["PATCH", "/admin/accounts/acc_unknown", { json: { plan: "pro" }, auth: ADMIN_TOKEN }, 404],
      ["HEAD", "/healthz", {}, 200],
      ["OPTIONS", "/healthz", {}, 404],
    ];
    for (const [method, path, init, expected] of cases) {
      const res = await app.request(path, { ...init, method });
      await res.body?.cancel();
      assert.equal(res.status, expected, `${method} ${path}`);
      assert.equal(res.headers.get("x-content-type-options"), "nosniff", `${method} ${path} (${res.status})`);
    }
    // A method no route knows, sent raw.
    const raw = await rawRequest(app.baseUrl, "BREW", "/coffee");
    assert.equal(raw.status, 404);
    assert.match(raw.text, /^x-content-type-options: nosniff\r$/im);
  } finally {
    await app.close();
    await db.close();
  }
});

Deno.test("responses that carry a credential send Cache-Control: no-store", async () => {
  const db = await createTestDb();
  const app = await startApp(db.sql);
  try {
    const email = `nostore-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const password = "correct horse";
    const register = await app.request("/api/auth/register", { method: "POST", json: { email, password } });
    assert.equal(register.status, 201);
    assert.ok(register.headers.getSetCookie().some((c) => c.startsWith("session=")));
    assert.equal(register.headers.get("cache-control"), "no-store", "register");
    await register.body?.cancel();

    const login = await app.request("/api/auth/login", { method: "POST", json: { email, password } });
    assert.equal(login.status, 200);
    assert.equal(login.headers.get("cache-control"), "no-store", "login");
    const cookie = sessionCookieOf(login);
    await login.body?.cancel();

    const { id } = await (await app.request("/api/me", { cookie })).json();
    const up = await app.request(`/admin/accounts/${id}`, {
      method: "PATCH",
      json: { plan: "pro" },
      auth: ADMIN_TOKEN,
    });
    assert.equal(up.status, 200);
    await up.body?.cancel();
    const created = await app.request("/api/api-keys", { method: "POST", json: { name: "ci" }, cookie });
    assert.equal(created.status, 201);
    assert.equal(created.headers.get("cache-control"), "no-store", "POST /api/api-keys");
    assert.match((await created.json()).key, /^isk_/);

    // Their refusals too.
    for (
      const [path, json] of [
        ["/api/auth/login", { email, password: "wrong password" }],
        ["/api/auth/login", { email: "not an email" }],
        ["/api/auth/register", { email, password }],
        ["/api/api-keys", { name: "" }],
      ] as const
    ) {
      const res = await app.request(path, { method: "POST", json, cookie });
      assert.ok(res.status >= 400, `${path} ${res.status}`);
      assert.equal(res.headers.get("cache-control"), "no-store", `${path} ${JSON.stringify(json)} (${res.status})`);
      await res.body?.cancel();
    }
  } finally {
    await app.close();
    await db.close();
  }
});

Deno.test("/docs: a Content-Security-Policy of its own origin with a fresh nonce, and no framing", async () => {
  const db = await createTestDb();
  const app = await startApp(db.sql);
  try {
    const nonces: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await app.request("/docs");
      assert.equal(res.status, 200);
      const html = await res.text();
      const csp = res.headers.get("content-security-policy") ?? "";
      const directives = new Map(
        csp.split(";").map((d) => d.trim().split(/\s+/)).map(([name, ...values]) => [name!, values]),
      );
      assert.deepEqual(directives.get("default-src"), ["'self'"]);
      assert.deepEqual(directives.get("frame-ancestors"), ["'none'"]);
      assert.deepEqual(directives.get("object-src"), ["'none'"]);
      assert.deepEqual(directives.get("base-uri"), ["'none'"]);
      const script = directives.get("script-src") ?? [];
      assert.equal(script.length, 2, csp);
      assert.equal(script[0], "'self'");
      const nonce = /^'nonce-([A-Za-z0-9+/=]{22,})'$/.exec(script[1]!)?.[1];
      assert.ok(nonce, `script-src has a nonce: ${csp}`);
      nonces.push(nonce);
      // Only this origin: no host, scheme or wildcard source anywhere in the policy, and no eval.
      for (const [name, values] of directives) {
        for (const value of values) {
          assert.ok(/^'(self|none|unsafe-inline|nonce-[A-Za-z0-9+/=]+)'$|^data:$/.test(value), `${name} ${value}`);
        }
      }
      assert.ok(
        !(directives.get("style-src") ?? []).some((v) => v.startsWith("'nonce-")),
        "a nonce would void 'unsafe-inline'",
      );
      assert.equal(res.headers.get("x-frame-options"), "DENY");
      assert.equal(res.headers.get("x-content-type-options"), "nosniff");
      // Every script of the page carries the nonce; the page names no other origin.
      const scripts = [...html.matchAll(/<script\b[^>]*>/g)].map((m) => m[0]);
      assert.ok(scripts.length >= 2, html);
      for (const tag of scripts) assert.ok(tag.includes(`nonce="${nonce}"`), tag);
      assert.match(html, /<script src="\/docs\/scalar\.js" nonce=/);
      assert.doesNotMatch(html, /https?:\/\//, "no other origin is referenced");
    }
    assert.notEqual(nonces[0], nonces[1], "a new nonce per response");

    // The policy is the page's: the API's JSON answers need none.
    const health = await app.request("/healthz");
    assert.equal(health.headers.get("content-security-policy"), null);
    await health.body?.cancel();
  } finally {
    await app.close();
    await db.close();
  }
});
