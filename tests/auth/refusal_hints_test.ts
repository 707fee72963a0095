/**
 * Every 401 says what is wrong with the same code and message: the cause is in
 * `hint` (`{success: false, error: "Unauthorized", code: "UNAUTHORIZED",
 * hint}`), one per case, and no field echoes the credential presented. A 403
 * PLAN_REQUIRED keeps the spec's message and names, in `hint`, the plans that
 * have the feature and the operator's commands that change a plan, which are
 * run here as the hint gives them. All over real HTTP.
 */
import assert from "node:assert/strict";
import { ADMIN_TOKEN, type Api, newApiKey, newUser, sessionCookieOf, setPlan } from "../_helpers/app.ts";
import { withService } from "../_helpers/harness.ts";
import { serviceEnv } from "../_helpers/process.ts";
import { generateApiKey } from "../../src/api_keys/key_format.ts";
import { staticTokenHints, UNAUTHORIZED_HINTS } from "../../src/auth/hints.ts";
import { runCli } from "../../src/admin/cli.ts";

const DAY_MS = 86_400_000;

/**
 * Asserts a 401 with exactly `{success, error, code, hint}`, the hint given,
 * and none of `secrets` anywhere in the body or the headers.
 */
async function expectRefusal(res: Response, hint: string, secrets: string[] = []): Promise<void> {
  const text = await res.text();
  assert.equal(res.status, 401, text);
  assert.deepEqual(JSON.parse(text), { success: false, error: "Unauthorized", code: "UNAUTHORIZED", hint });
  const everything = text + JSON.stringify([...res.headers]);
  for (const secret of secrets) assert.ok(!everything.includes(secret), `the answer echoes ${secret}`);
}

/** GET /api/me with the given headers. */
const me = (app: Api, headers: Record<string, string> = {}) => app.request("/api/me", { headers });

/** A well-formed key with its last character changed: the checksum no longer matches. */
function withBadChecksum(key: string): string {
  return key.slice(0, -1) + (key.endsWith("A") ? "B" : "A");
}

Deno.test("401 without Authorization header and without session cookie: how to send a credential", async () => {
  await withService({}, async ({ app }) => {
    await expectRefusal(await me(app), UNAUTHORIZED_HINTS.noCredential);
    await expectRefusal(await me(app, { cookie: "theme=dark" }), UNAUTHORIZED_HINTS.noCredential);
    assert.match(UNAUTHORIZED_HINTS.noCredential, /Authorization: Bearer/);
    assert.match(UNAUTHORIZED_HINTS.noCredential, /session cookie/);
  });
});

Deno.test("401 for an Authorization header that is not Bearer <key>", async () => {
  await withService({ user: "pro" }, async ({ app, user }) => {
    const { key } = await newApiKey(app, user);
    for (
      const authorization of [`Basic ${btoa(`me:${key}`)}`, `Token ${key}`, key, "Bearer", "Bearer ", `Bearer ${key} x`]
    ) {
      // Beside a valid session: a bad header is refused, not passed over for the cookie.
      const res = await me(app, { authorization, cookie: user.cookie });
      await expectRefusal(res, UNAUTHORIZED_HINTS.notBearer, [key, btoa(`me:${key}`)]);
    }
    assert.match(UNAUTHORIZED_HINTS.notBearer, /Bearer <API key>/);
  });
});

Deno.test("401 for a key that fails its checksum, told apart from an unknown one", async () => {
  await withService({}, async ({ app }) => {
    const { key } = generateApiKey();
    for (const bad of [withBadChecksum(key), "isk_short", `${key}x`, "whsec_0123456789abcdef0123456789"]) {
      await expectRefusal(await me(app, { authorization: `Bearer ${bad}` }), UNAUTHORIZED_HINTS.malformedKey, [bad]);
    }
    assert.match(UNAUTHORIZED_HINTS.malformedKey, /checksum/);
  });
});

Deno.test("401 for a key that is unknown or revoked: one hint for both", async () => {
  await withService({ user: "pro" }, async ({ app, user }) => {
    const never = generateApiKey().key; // well-formed, never issued
    await expectRefusal(await me(app, { authorization: `Bearer ${never}` }), UNAUTHORIZED_HINTS.unknownKey, [never]);

    const { id, key } = await newApiKey(app, user);
    const live = await me(app, { authorization: `Bearer ${key}` });
    assert.equal(live.status, 200);
    await live.body?.cancel();
    const revoked = await app.request(`/api/api-keys/${id}`, { method: "DELETE", cookie: user.cookie });
    assert.equal(revoked.status, 200);
    await revoked.body?.cancel();
    await expectRefusal(await me(app, { authorization: `Bearer ${key}` }), UNAUTHORIZED_HINTS.unknownKey, [
      key,
      key.slice(4, 16),
    ]);
    assert.match(UNAUTHORIZED_HINTS.unknownKey, /unknown or was revoked/);
  });
});

Deno.test("401 for a session cookie that is unknown or expired: log in again", async () => {
  await withService({ env: { SESSION_TTL_DAYS: "1" } }, async ({ app, clock }) => {
    const forged = "forged-session-token-0123456789";
    await expectRefusal(await me(app, { cookie: `session=${forged}` }), UNAUTHORIZED_HINTS.session, [forged]);
    await expectRefusal(await me(app, { cookie: `session=${"x".repeat(500)}` }), UNAUTHORIZED_HINTS.session);

    const email = `hint-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const res = await app.request("/api/auth/register", {
      method: "POST",
      json: { email, password: "correct horse battery" },
    });
    assert.equal(res.status, 201);
    await res.body?.cancel();
    const cookie = sessionCookieOf(res);
    clock.advance(DAY_MS);
    await expectRefusal(await me(app, { cookie }), UNAUTHORIZED_HINTS.session, [cookie.slice("session=".length)]);
    assert.match(UNAUTHORIZED_HINTS.session, /log in again/);
  });
});

Deno.test("401 on /admin and /metrics names the token's variable, never the token", async () => {
  const METRICS_TOKEN = "metrics-token-0123456789";
  await withService({ env: { METRICS_TOKEN } }, async ({ app }) => {
    for (
      const [path, variable, token] of [["/admin/accounts?email=a@b.c", "ADMIN_TOKEN", ADMIN_TOKEN], [
        "/metrics",
        "METRICS_TOKEN",
        METRICS_TOKEN,
      ]] as const
    ) {
      const hints = staticTokenHints(variable);
      await expectRefusal(await app.request(path), hints.missing);
      await expectRefusal(await app.request(path, { headers: { authorization: token } }), hints.notBearer, [token]);
      const near = `${token}x`;
      await expectRefusal(await app.request(path, { headers: { authorization: `Bearer ${near}` } }), hints.wrong, [
        near,
        token,
      ]);
      assert.match(hints.missing, new RegExp(`Bearer <${variable}>`));
    }
  });
});

Deno.test("403 PLAN_REQUIRED keeps the spec's message and names the plans and the operator command, which works", async () => {
  await withService({}, async (h) => {
    const { app, db } = h;
    const user = await newUser(app, "free");
    const expectPlanRequired = async (res: Response, error: string, feature: string) => {
      const body = await res.json();
      assert.equal(res.status, 403, JSON.stringify(body));
      assert.deepEqual(Object.keys(body).sort(), ["code", "error", "hint", "success"]);
      assert.equal(body.code, "PLAN_REQUIRED");
      assert.equal(body.error, error);
      assert.ok(body.hint.startsWith(`${feature} need the pro or business plan; this account (${user.id})`), body.hint);
      assert.ok(body.hint.includes("is on the free plan"), body.hint);
      assert.ok(body.hint.includes(`\`deno task admin set-plan ${user.id} pro\``), body.hint);
      assert.ok(body.hint.includes(`\`PATCH /admin/accounts/${user.id}\` and {"plan":"pro"}`), body.hint);
      assert.ok(!body.hint.includes(user.cookie.slice("session=".length)));
      return body.hint as string;
    };

    const hooks = await app.request("/api/user-webhooks", { cookie: user.cookie });
    await expectPlanRequired(hooks, "Webhooks require Pro or Business plan", "Webhooks");
    const keysHint = await expectPlanRequired(
      await app.request("/api/api-keys", { cookie: user.cookie }),
      "API keys not available on your plan",
      "API keys",
    );

    // The command of the hint, run as an operator would.
    const command = /`deno task admin ([^`]+)`/.exec(keysHint)![1]!.split(" ");
    const out: string[] = [];
    const err: string[] = [];
    const env = serviceEnv(db);
    const code = await runCli(command, env, (l) => out.push(l), (l) => err.push(l));
    assert.equal(code, 0, err.join("\n"));
    assert.equal(JSON.parse(out.join("\n")).plan, "pro");
    const keys = await app.request("/api/api-keys", { cookie: user.cookie });
    assert.equal(keys.status, 200);
    await keys.body?.cancel();

    // And the HTTP form, back to free and up again.
    await setPlan(app, user.id, "free");
    const hookHint = await expectPlanRequired(
      await app.request("/api/user-webhooks", { cookie: user.cookie }),
      "Webhooks require Pro or Business plan",
      "Webhooks",
    );
    const [, path, json] = /`PATCH (\S+)` and (\{.*\})$/.exec(hookHint)!;
    const up = await app.request(path!, {
      method: "PATCH",
      body: json,
      auth: ADMIN_TOKEN,
      headers: { "content-type": "application/json" },
    });
    assert.equal(up.status, 200);
    await up.body?.cancel();
    const list = await app.request("/api/user-webhooks", { cookie: user.cookie });
    assert.equal(list.status, 200);
    await list.body?.cancel();
  });
});
