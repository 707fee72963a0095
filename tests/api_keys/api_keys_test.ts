/**
 * The API-key feature over real HTTP against real PostgreSQL: spec sections
 * 2.1, 4.1, 5, 7 and 8.
 */
import assert from "node:assert/strict";
import { body } from "../_helpers/expect.ts";
import { newApiKey, newUser } from "../_helpers/app.ts";
import { withService } from "../_helpers/harness.ts";
import { capturedLogText } from "../_helpers/log_capture.ts";
import { isWellFormedApiKey } from "../../src/api_keys/key_format.ts";
import { planRequiredHint, UNAUTHORIZED_HINTS } from "../../src/auth/hints.ts";

Deno.test("requests without a credential are 401 on every API-key endpoint", async () => {
  await withService({}, async ({ app }) => {
    for (const [method, path] of [["POST", "/api/api-keys"], ["GET", "/api/api-keys"], ["DELETE", "/api/api-keys/x"]]) {
      const res = await app.request(path!, { method, json: method === "POST" ? { name: "x" } : undefined });
      assert.equal(res.status, 401, `${method} ${path}`);
      assert.deepEqual(await body(res), {
        success: false,
        error: "Unauthorized",
        code: "UNAUTHORIZED",
        hint: UNAUTHORIZED_HINTS.noCredential,
      });
    }
    const wrong = await app.request("/api/api-keys", { auth: "isk_notarealkey" });
    assert.equal(wrong.status, 401);
    await wrong.body?.cancel();
  });
});

Deno.test("a free account (cookie-authenticated) gets 403 on create, list and delete", async () => {
  await withService({}, async ({ app }) => {
    const user = await newUser(app, "free");
    const create = await app.request("/api/api-keys", { method: "POST", json: { name: "ci" }, cookie: user.cookie });
    assert.equal(create.status, 403);
    assert.deepEqual(await body(create), {
      success: false,
      error: "API keys not available on your plan",
      code: "PLAN_REQUIRED",
      hint: planRequiredHint("API keys", ["pro", "business"], { accountId: user.id, plan: "free" }),
    });
    for (const [method, path] of [["GET", "/api/api-keys"], ["DELETE", "/api/api-keys/key_x"]]) {
      const res = await app.request(path!, { method, cookie: user.cookie });
      assert.equal(res.status, 403, `${method} ${path}`);
      assert.equal((await body(res)).code, "PLAN_REQUIRED");
    }
    const count = await app.deps.sql`SELECT count(*)::int AS n FROM api_keys`;
    assert.equal(count[0]!.n, 0);
  });
});

Deno.test("creation returns the key once; listing never does; the key authenticates", async () => {
  await withService({}, async ({ app }) => {
    const user = await newUser(app, "pro");
    const res = await app.request("/api/api-keys", {
      method: "POST",
      json: { name: "CI runner" },
      cookie: user.cookie,
    });
    assert.equal(res.status, 201);
    const created = await body(res);
    // The spec's fields, and what the key may do: a key made as the spec shows has every scope, every inbox, no expiry.
    assert.deepEqual(Object.keys(created).sort(), [
      "createdAt",
      "expiresAt",
      "id",
      "inboxIds",
      "key",
      "keyPrefix",
      "name",
      "scopes",
    ]);
    assert.deepEqual(created.scopes, [
      "inboxes:read",
      "inboxes:write",
      "webhooks:read",
      "webhooks:write",
      "events:read",
    ]);
    assert.equal(created.inboxIds, null);
    assert.equal(created.expiresAt, null);
    const key = created.key as string;
    assert.equal(created.name, "CI runner");
    assert.ok(isWellFormedApiKey(key), "key has the documented format and checksum");
    assert.ok(key.startsWith(created.keyPrefix as string));
    assert.ok((created.keyPrefix as string).length < key.length / 2, "the prefix does not reveal the key");
    assert.equal(new Date(created.createdAt as string).toISOString(), created.createdAt);
    assert.match(res.headers.get("ratelimit-policy") ?? "", /^"api-keys-create";q=10;w=60$/);
    assert.match(res.headers.get("ratelimit") ?? "", /^"api-keys-create";r=9;t=\d+$/);

    // Stored as a digest only.
    const stored = await app.deps.sql`SELECT * FROM api_keys`;
    assert.ok(!JSON.stringify(stored).includes(key));

    const list = await app.request("/api/api-keys", { cookie: user.cookie });
    assert.equal(list.status, 200);
    const keys = await list.json() as Record<string, unknown>[];
    assert.equal(keys.length, 1);
    assert.deepEqual(Object.keys(keys[0]!).sort(), [
      "createdAt",
      "expiresAt",
      "id",
      "inboxIds",
      "keyPrefix",
      "lastUsedAt",
      "name",
      "scopes",
    ]);
    assert.ok(!JSON.stringify(keys).includes(key));

    const me = await app.request("/api/me", { auth: key });
    assert.equal(me.status, 200);
    assert.equal((await body(me)).id, user.id);

    // A key with a broken checksum is refused without a lookup, like any bad key.
    const tampered = key.slice(0, -1) + (key.endsWith("A") ? "B" : "A");
    const bad = await app.request("/api/me", { auth: tampered });
    assert.equal(bad.status, 401);
    await bad.body?.cancel();

    assert.ok(!capturedLogText().includes(key), "the key never appears in logs");
  });
});

Deno.test("validation errors are 400 with details and create nothing", async () => {
  await withService({}, async ({ app }) => {
    const user = await newUser(app, "business");
    const cases: Array<[unknown, string]> = [
      [{}, "name"],
      [{ name: "" }, "name"],
      [{ name: "x".repeat(101) }, "name"],
      [{ name: 5 }, "name"],
      [{ name: "ok", extra: true }, "extra"],
    ];
    for (const [json, path] of cases) {
      const res = await app.request("/api/api-keys", { method: "POST", json, cookie: user.cookie });
      assert.equal(res.status, 400, JSON.stringify(json));
      const err = await body(res);
      assert.equal(err.code, "VALIDATION_ERROR");
      assert.equal(err.success, false);
      assert.ok((err.details as { path: string }[]).some((d) => d.path === path), JSON.stringify(err));
    }
    const malformed = await app.request("/api/api-keys", {
      method: "POST",
      body: "{not json",
      headers: { "content-type": "application/json" },
      cookie: user.cookie,
    });
    assert.equal(malformed.status, 400);
    assert.equal((await body(malformed)).code, "VALIDATION_ERROR");
    const form = await app.request("/api/api-keys", {
      method: "POST",
      body: "name=x",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      cookie: user.cookie,
    });
    assert.equal(form.status, 415);
    assert.equal((await body(form)).code, "UNSUPPORTED_MEDIA_TYPE");
    // PostgreSQL cannot store NUL: a clear 400, never a 500.
    const nul = await app.request("/api/api-keys", { method: "POST", json: { name: "a\u0000b" }, cookie: user.cookie });
    assert.equal(nul.status, 400);
    assert.deepEqual(await body(nul), {
      success: false,
      error: "Text must not contain NUL characters",
      code: "VALIDATION_ERROR",
    });
    const nulId = await app.request("/api/api-keys/key_%00", { method: "DELETE", cookie: user.cookie });
    assert.equal(nulId.status, 404);
    assert.equal((await body(nulId)).code, "API_KEY_NOT_FOUND");
    const count = await app.deps.sql`SELECT count(*)::int AS n FROM api_keys`;
    assert.equal(count[0]!.n, 0);
  });
});

Deno.test("lastUsedAt is null until first use, set on use, then written at most once a minute", async () => {
  await withService({}, async ({ app, clock }) => {
    const user = await newUser(app, "pro");
    const { key } = await newApiKey(app, user);
    const lastUsed = async () => {
      const res = await app.request("/api/api-keys", { cookie: user.cookie });
      return ((await res.json()) as { lastUsedAt: string | null }[])[0]!.lastUsedAt;
    };
    assert.equal(await lastUsed(), null);

    const first = clock.now().toISOString();
    await (await app.request("/api/me", { auth: key })).body?.cancel();
    assert.equal(await lastUsed(), first);

    clock.advance(30_000);
    await (await app.request("/api/me", { auth: key })).body?.cancel();
    assert.equal(await lastUsed(), first, "not rewritten within the minute");

    clock.advance(31_000);
    const later = clock.now().toISOString();
    await (await app.request("/api/me", { auth: key })).body?.cancel();
    assert.equal(await lastUsed(), later);
  });
});

Deno.test("the 11th key is refused with 400 Maximum 10 API keys allowed", async () => {
  await withService({}, async ({ app }) => {
    // Business allows 30 creations a minute, so the count limit is what refuses.
    const user = await newUser(app, "business");
    for (let i = 0; i < 10; i++) await newApiKey(app, user, `k${i}`);
    const res = await app.request("/api/api-keys", { method: "POST", json: { name: "k10" }, cookie: user.cookie });
    assert.equal(res.status, 400);
    assert.deepEqual(await body(res), { success: false, error: "Maximum 10 API keys allowed", code: "API_KEY_LIMIT" });
    const count = await app.deps.sql`SELECT count(*)::int AS n FROM api_keys WHERE account_id = ${user.id}`;
    assert.equal(count[0]!.n, 10);
  });
});

Deno.test("concurrent creations cannot pass the 10-key limit", async () => {
  await withService({}, async ({ app }) => {
    const user = await newUser(app, "business");
    const results = await Promise.all(
      Array.from(
        { length: 15 },
        (_, i) =>
          app.request("/api/api-keys", { method: "POST", json: { name: `k${i}` }, cookie: user.cookie }).then(
            async (r) => {
              await r.body?.cancel();
              return r.status;
            },
          ),
      ),
    );
    assert.equal(results.filter((s) => s === 201).length, 10);
    assert.equal(results.filter((s) => s === 400).length, 5);
  });
});

Deno.test("Pro: the 11th POST in a minute is 429 with Retry-After; invalid requests count too", async () => {
  await withService({}, async ({ app, clock }) => {
    const user = await newUser(app, "pro");
    for (let i = 0; i < 8; i++) await newApiKey(app, user, `k${i}`);
    for (let i = 0; i < 2; i++) {
      const bad = await app.request("/api/api-keys", { method: "POST", json: {}, cookie: user.cookie });
      assert.equal(bad.status, 400);
      await bad.body?.cancel();
    }
    clock.advance(20_000);
    const res = await app.request("/api/api-keys", { method: "POST", json: { name: "k11" }, cookie: user.cookie });
    assert.equal(res.status, 429);
    const err = await body(res);
    assert.equal(err.code, "RATE_LIMITED");
    assert.equal(err.success, false);
    assert.equal(res.headers.get("retry-after"), "40");
    assert.equal(res.headers.get("ratelimit"), '"api-keys-create";r=0;t=40');
    assert.equal(res.headers.get("ratelimit-policy"), '"api-keys-create";q=10;w=60');

    // Other operations have their own budgets.
    const list = await app.request("/api/api-keys", { cookie: user.cookie });
    assert.equal(list.status, 200);
    await list.body?.cancel();

    // Once the first requests leave the window, creation works again.
    clock.advance(41_000);
    const again = await app.request("/api/api-keys", { method: "POST", json: { name: "k11" }, cookie: user.cookie });
    assert.equal(again.status, 201);
    await again.body?.cancel();
  });
});

Deno.test("Pro: the 31st GET in a minute is 429; Business allows 60", async () => {
  await withService({}, async ({ app }) => {
    const pro = await newUser(app, "pro");
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) {
      const res = await app.request("/api/api-keys", { cookie: pro.cookie });
      statuses.push(res.status);
      await res.body?.cancel();
    }
    assert.deepEqual(statuses.slice(0, 30), Array(30).fill(200));
    assert.equal(statuses[30], 429);

    const business = await newUser(app, "business");
    for (let i = 0; i < 60; i++) {
      const res = await app.request("/api/api-keys", { cookie: business.cookie });
      assert.equal(res.status, 200, `request ${i + 1}`);
      await res.body?.cancel();
    }
    const res = await app.request("/api/api-keys", { cookie: business.cookie });
    assert.equal(res.status, 429);
    await res.body?.cancel();
  });
});

Deno.test("Pro: the 11th DELETE in a minute is 429, before the 404", async () => {
  await withService({}, async ({ app }) => {
    const user = await newUser(app, "pro");
    for (let i = 0; i < 10; i++) {
      const res = await app.request(`/api/api-keys/key_missing${i}`, { method: "DELETE", cookie: user.cookie });
      assert.equal(res.status, 404);
      assert.deepEqual(await body(res), { success: false, error: "API key not found", code: "API_KEY_NOT_FOUND" });
    }
    const res = await app.request("/api/api-keys/key_missing", { method: "DELETE", cookie: user.cookie });
    assert.equal(res.status, 429);
    assert.ok(Number(res.headers.get("retry-after")) >= 1);
    await res.body?.cancel();
  });
});

Deno.test("revocation: DELETE answers success, the key fails on the very next request, a second DELETE is 404", async () => {
  await withService({}, async ({ app }) => {
    const user = await newUser(app, "pro");
    const { id, key } = await newApiKey(app, user);
    const before = await app.request("/api/me", { auth: key });
    assert.equal(before.status, 200);
    await before.body?.cancel();
    const del = await app.request(`/api/api-keys/${id}`, { method: "DELETE", auth: key });
    assert.equal(del.status, 200);
    assert.deepEqual(await body(del), { success: true });
    const after = await app.request("/api/me", { auth: key });
    assert.equal(after.status, 401);
    await after.body?.cancel();
    const again = await app.request(`/api/api-keys/${id}`, { method: "DELETE", cookie: user.cookie });
    assert.equal(again.status, 404);
    assert.equal((await body(again)).code, "API_KEY_NOT_FOUND");
  });
});

Deno.test("one account can neither see nor delete another's keys", async () => {
  await withService({}, async ({ app }) => {
    const alice = await newUser(app, "pro");
    const bob = await newUser(app, "pro");
    const aliceKey = await newApiKey(app, alice);
    const list = await app.request("/api/api-keys", { cookie: bob.cookie });
    assert.deepEqual(await list.json(), []);
    const del = await app.request(`/api/api-keys/${aliceKey.id}`, { method: "DELETE", cookie: bob.cookie });
    assert.equal(del.status, 404);
    assert.equal((await body(del)).error, "API key not found");
    const still = await app.request("/api/me", { auth: aliceKey.key });
    assert.equal(still.status, 200);
    await still.body?.cancel();
  });
});

Deno.test("two instances on one database share the per-minute limit and see revocations at once", async () => {
  await withService({ listen: true }, async (h) => {
    const { app: a, clock } = h;
    const b = await h.startInstance({ poolSize: 3 });
    const user = await newUser(a, "pro");
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) {
      const res = await (i % 2 === 0 ? a : b).request("/api/api-keys", { cookie: user.cookie });
      statuses.push(res.status);
      await res.body?.cancel();
    }
    assert.deepEqual(statuses.slice(0, 30), Array(30).fill(200));
    assert.equal(statuses[30], 429, "the 31st request, on instance A, sees the 15 made on B");
    const onB = await b.request("/api/api-keys", { cookie: user.cookie });
    assert.equal(onB.status, 429);
    await onB.body?.cancel();

    clock.advance(60_000);
    const { id, key } = await newApiKey(b, user);
    const ok = await a.request("/api/me", { auth: key });
    assert.equal(ok.status, 200);
    await ok.body?.cancel();
    const del = await b.request(`/api/api-keys/${id}`, { method: "DELETE", cookie: user.cookie });
    assert.equal(del.status, 200);
    await del.body?.cancel();
    // A had the key in its auth cache: B's NOTIFY makes it forget it at once,
    // and the cache's 1 s lifetime bounds the wait even if the NOTIFY were lost.
    const revokedAt = performance.now();
    let status = 200;
    while (status !== 401 && performance.now() - revokedAt < 1_100) {
      const res = await a.request("/api/me", { auth: key });
      status = res.status;
      await res.body?.cancel();
    }
    assert.equal(status, 401, "instance A refuses the key revoked through B");
    assert.ok(performance.now() - revokedAt < 1_100, "within the cache's 1 s bound");
  });
});

Deno.test("the auth cache: a key's owner is reused for a second, then read again", async () => {
  const { AuthCache } = await import("../../src/api_keys/auth_cache.ts");
  let now = 0;
  const cache = new AuthCache(1_000, 2, () => now);
  const owner = {
    keyId: "key_1",
    lastUsedAt: null,
    accountId: "acc_1",
    email: "a@x",
    plan: "pro" as const,
    scopes: null,
    inboxIds: null,
    expiresAt: null,
  };
  cache.set("h1", owner);
  assert.equal(cache.get("h1"), owner);
  now = 999;
  assert.equal(cache.get("h1"), owner);
  now = 1_000;
  assert.equal(cache.get("h1"), undefined, "gone after its second");
  cache.set("h1", owner);
  cache.invalidateKey("key_1");
  assert.equal(cache.get("h1"), undefined, "revocation forgets it at once");
  cache.set("a", owner);
  cache.set("b", { ...owner, keyId: "key_2" });
  cache.set("c", { ...owner, keyId: "key_3" });
  assert.equal(cache.get("a"), undefined, "bounded: the oldest entry goes first");
  assert.ok(cache.get("c"));
});
