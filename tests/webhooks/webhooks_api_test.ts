/**
 * User-webhook management over real HTTP against real PostgreSQL: spec
 * sections 2.2, 3.1, 4.2, 5 and 7 (field sets, errors, isolation, state).
 */
import assert from "node:assert/strict";
import type { ErrorBody } from "../../src/errors.ts";
import { newApiKey, newUser, setPlan } from "../_helpers/app.ts";
import { withService } from "../_helpers/harness.ts";
import { planRequiredHint, UNAUTHORIZED_HINTS } from "../../src/auth/hints.ts";
import {
  body,
  countWebhooks,
  CREATED_FIELDS,
  createOk,
  createRaw,
  deleteOk,
  DETAIL_FIELDS,
  expectError,
  getOne,
  type Json,
  patch,
  snapshot,
  SUMMARY_FIELDS,
} from "./_support.ts";

const URL_OR_EVENTS = "Invalid URL (must be HTTPS) or events";

Deno.test("create, list, get, patch and delete answer exactly the fields of spec 4.2", async () => {
  await withService({}, async ({ app, clock }) => {
    const user = await newUser(app, "pro");
    const res = await createRaw(app, user, {
      url: "https://hooks.example.com/inbox",
      events: ["inbox.expired", "message.received"],
      secret: "s3cret-s3cret-s3cret",
    });
    assert.equal(res.status, 201);
    const created = await body(res);
    assert.deepEqual(Object.keys(created).sort(), CREATED_FIELDS);
    assert.equal(created.url, "https://hooks.example.com/inbox");
    assert.deepEqual(created.events, ["inbox.expired", "message.received"]);
    assert.equal(created.active, true);
    assert.equal(created.createdAt, clock.now().toISOString());
    assert.equal(typeof created.id, "string");
    const id = created.id as string;

    const list = await app.request("/api/user-webhooks", { cookie: user.cookie });
    assert.equal(list.status, 200);
    const items = await list.json() as Json[];
    assert.equal(items.length, 1);
    assert.deepEqual(Object.keys(items[0]!).sort(), SUMMARY_FIELDS);
    assert.deepEqual(items[0], {
      id,
      url: "https://hooks.example.com/inbox",
      events: ["inbox.expired", "message.received"],
      active: true,
      failureCount: 0,
      lastTriggeredAt: null,
      createdAt: created.createdAt,
    });

    const one = await getOne(app, user, id);
    assert.equal(one.status, 200);
    assert.deepEqual(Object.keys(one.json).sort(), DETAIL_FIELDS);
    assert.deepEqual(one.json, { ...items[0], lastFailureAt: null, lastFailureReason: null });

    const patched = await patch(app, user, id, { active: false });
    assert.equal(patched.status, 200);
    assert.deepEqual(await body(patched), { success: true });

    const deleted = await app.request(`/api/user-webhooks/${id}`, { method: "DELETE", cookie: user.cookie });
    assert.equal(deleted.status, 200);
    assert.deepEqual(await body(deleted), { success: true });

    const after = await getOne(app, user, id);
    assert.equal(after.status, 404);
    assert.deepEqual(after.json, { success: false, error: "Webhook not found", code: "WEBHOOK_NOT_FOUND" });
    await expectError(await patch(app, user, id, { active: true }), 404, "WEBHOOK_NOT_FOUND", "Webhook not found");
    const again = await app.request(`/api/user-webhooks/${id}`, { method: "DELETE", cookie: user.cookie });
    await expectError(again, 404, "WEBHOOK_NOT_FOUND", "Webhook not found");
    const empty = await app.request("/api/user-webhooks", { cookie: user.cookie });
    assert.deepEqual(await empty.json(), []);
    assert.equal(await countWebhooks(app.deps.sql), 0);
  });
});

Deno.test("an API key (Bearer) works on every webhook verb, like the session", async () => {
  await withService({}, async ({ app }) => {
    const user = await newUser(app, "business");
    const { key } = await newApiKey(app, user);
    const res = await app.request("/api/user-webhooks", {
      method: "POST",
      json: { url: "https://api.example.com/hook", events: ["inbox.created"] },
      auth: key,
    });
    assert.equal(res.status, 201);
    const { id } = await body(res);
    const list = await app.request("/api/user-webhooks", { auth: key });
    assert.deepEqual(((await list.json()) as Json[]).map((w) => w.id), [id]);
    const one = await app.request(`/api/user-webhooks/${id}`, { auth: key });
    assert.equal((await body(one)).id, id);
    const up = await app.request(`/api/user-webhooks/${id}`, { method: "PATCH", json: { active: false }, auth: key });
    assert.deepEqual(await body(up), { success: true });
    const del = await app.request(`/api/user-webhooks/${id}`, { method: "DELETE", auth: key });
    assert.deepEqual(await body(del), { success: true });
    assert.equal(await countWebhooks(app.deps.sql), 0);
  });
});

Deno.test("401 Unauthorized on every verb without a credential, or with a bad one", async () => {
  await withService({}, async ({ app }) => {
    const owner = await newUser(app, "pro");
    const hook = await createOk(app, owner, "https://example.com/a");
    const before = await snapshot(app.deps.sql);
    const calls: Array<[string, string, unknown]> = [
      ["GET", "/api/user-webhooks", undefined],
      ["POST", "/api/user-webhooks", { url: "https://example.com/b", events: ["inbox.created"] }],
      ["GET", `/api/user-webhooks/${hook.id}`, undefined],
      ["PATCH", `/api/user-webhooks/${hook.id}`, { active: false }],
      ["DELETE", `/api/user-webhooks/${hook.id}`, undefined],
    ];
    for (const [method, path, json] of calls) {
      for (const auth of [undefined, "isk_not_a_real_key"]) {
        const res = await app.request(path, { method, json, auth });
        assert.equal(res.status, 401, `${method} ${path} auth=${auth}`);
        assert.deepEqual(await body(res), {
          success: false,
          error: "Unauthorized",
          code: "UNAUTHORIZED",
          hint: auth === undefined ? UNAUTHORIZED_HINTS.noCredential : UNAUTHORIZED_HINTS.malformedKey,
        });
      }
    }
    const badCookie = await app.request("/api/user-webhooks", { cookie: "session=forged" });
    await expectError(badCookie, 401, "UNAUTHORIZED", "Unauthorized");
    assert.equal(await snapshot(app.deps.sql), before, "refused requests change nothing");
  });
});

Deno.test("403 Webhooks require Pro or Business plan for a free account on every verb", async () => {
  await withService({}, async ({ app }) => {
    const free = await newUser(app, "free");
    const body403 = (who: { id: string }) => ({
      success: false,
      error: "Webhooks require Pro or Business plan",
      code: "PLAN_REQUIRED",
      hint: planRequiredHint("Webhooks", ["pro", "business"], { accountId: who.id, plan: "free" }),
    });
    const create = await createRaw(app, free, { url: "https://example.com/free", events: ["inbox.created"] });
    assert.equal(create.status, 403);
    assert.deepEqual(await body(create), body403(free));
    assert.equal(await countWebhooks(app.deps.sql), 0);

    // A Pro account with a webhook that is downgraded keeps the row but loses access to it.
    const user = await newUser(app, "pro");
    const hook = await createOk(app, user, "https://example.com/downgraded");
    await setPlan(app, user.id, "free");
    const before = await snapshot(app.deps.sql);
    for (const who of [free, user]) {
      const calls: Array<[string, string, unknown]> = [
        ["GET", "/api/user-webhooks", undefined],
        ["POST", "/api/user-webhooks", { url: "https://example.com/x", events: ["inbox.created"] }],
        ["GET", `/api/user-webhooks/${hook.id}`, undefined],
        ["PATCH", `/api/user-webhooks/${hook.id}`, { active: false, events: ["inbox.expired"] }],
        ["DELETE", `/api/user-webhooks/${hook.id}`, undefined],
      ];
      for (const [method, path, json] of calls) {
        const res = await app.request(path, { method, json, cookie: who.cookie });
        assert.equal(res.status, 403, `${method} ${path}`);
        assert.deepEqual(await body(res), body403(who));
      }
    }
    assert.equal(await snapshot(app.deps.sql), before, "refused requests change nothing");
  });
});

Deno.test("400 Invalid URL (must be HTTPS) or events: every url and events problem, on POST and PATCH", async () => {
  await withService({}, async ({ app }) => {
    const user = await newUser(app, "pro");
    const ok = { url: "https://example.com/hook", events: ["message.received"] };
    const cases: Array<[string, Json, "url" | "events"]> = [
      ["http URL", { ...ok, url: "http://example.com/hook" }, "url"],
      ["ftp URL", { ...ok, url: "ftp://example.com/hook" }, "url"],
      ["not a URL", { ...ok, url: "not a url" }, "url"],
      ["relative URL", { ...ok, url: "/hook" }, "url"],
      ["empty URL", { ...ok, url: "" }, "url"],
      ["userinfo", { ...ok, url: "https://user:pass@example.com/hook" }, "url"],
      ["user only", { ...ok, url: "https://user@example.com/hook" }, "url"],
      ["url a number", { ...ok, url: 42 }, "url"],
      ["url null", { ...ok, url: null }, "url"],
      ["missing url", { events: ok.events }, "url"],
      ["empty events", { ...ok, events: [] }, "events"],
      ["unknown event", { ...ok, events: ["message.deleted"] }, "events"],
      ["test event", { ...ok, events: ["test"] }, "events"],
      ["test among valid", { ...ok, events: ["inbox.created", "test"] }, "events"],
      ["duplicate events", { ...ok, events: ["inbox.created", "inbox.created"] }, "events"],
      ["events a string", { ...ok, events: "message.received" }, "events"],
      ["events an object", { ...ok, events: { 0: "message.received" } }, "events"],
      ["events null", { ...ok, events: null }, "events"],
      ["event not a string", { ...ok, events: [1] }, "events"],
      ["missing events", { url: ok.url }, "events"],
    ];
    const names = (err: ErrorBody, field: string) =>
      (err.details ?? []).some((d) => d.path === field || d.path.startsWith(`${field}.`));
    for (const [label, json, field] of cases) {
      const res = await createRaw(app, user, json);
      const err = await expectError(res, 400, "VALIDATION_ERROR", URL_OR_EVENTS);
      assert.ok(Array.isArray(err.details), `${label}: details present`);
      assert.ok(names(err, field), `${label}: details name ${field}: ${JSON.stringify(err.details)}`);
    }
    assert.equal(await countWebhooks(app.deps.sql), 0, "no refused creation inserted anything");

    const hook = await createOk(app, user, ok.url);
    const before = await snapshot(app.deps.sql);
    for (const [label, json, field] of cases) {
      // PATCH fields are optional: only send the field under test, and skip the "missing" cases.
      if (!(field in json)) continue;
      const res = await patch(app, user, hook.id, { [field]: json[field] });
      const err = await expectError(res, 400, "VALIDATION_ERROR", URL_OR_EVENTS);
      assert.ok(names(err, field), `PATCH ${label}: ${JSON.stringify(err.details)}`);
    }
    assert.equal(await snapshot(app.deps.sql), before, "no refused update changed anything");
  });
});

Deno.test("secret length, unknown fields, non-JSON and malformed JSON are refused and change nothing", async () => {
  await withService({}, async ({ app }) => {
    const user = await newUser(app, "pro");
    const ok = { url: "https://example.com/hook", events: ["message.received"] };
    const bad: Array<[string, Json, string]> = [
      ["secret of 15", { ...ok, secret: "x".repeat(15) }, "secret"],
      ["secret of 257", { ...ok, secret: "x".repeat(257) }, "secret"],
      ["empty secret", { ...ok, secret: "" }, "secret"],
      ["secret a number", { ...ok, secret: 1234567890123456 }, "secret"],
      ["unknown field", { ...ok, extra: true }, "extra"],
      ["active on create", { ...ok, active: false }, "active"],
    ];
    for (const [label, json, path] of bad) {
      const err = await expectError(await createRaw(app, user, json), 400, "VALIDATION_ERROR");
      const paths = (err.details as { path: string }[]).map((d) => d.path);
      assert.ok(paths.includes(path), `${label}: ${JSON.stringify(err)}`);
    }
    const malformed = await app.request("/api/user-webhooks", {
      method: "POST",
      body: '{"url": "https://example.com/hook", "events": [',
      headers: { "content-type": "application/json" },
      cookie: user.cookie,
    });
    await expectError(malformed, 400, "VALIDATION_ERROR");
    const text = await app.request("/api/user-webhooks", {
      method: "POST",
      body: JSON.stringify(ok),
      headers: { "content-type": "text/plain" },
      cookie: user.cookie,
    });
    await expectError(text, 415, "UNSUPPORTED_MEDIA_TYPE");
    const form = await app.request("/api/user-webhooks", {
      method: "POST",
      body: "url=https://example.com/hook&events=message.received",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      cookie: user.cookie,
    });
    await expectError(form, 415, "UNSUPPORTED_MEDIA_TYPE");
    assert.equal(await countWebhooks(app.deps.sql), 0);

    // The boundaries themselves are accepted.
    await createOk(app, user, "https://example.com/16", { secret: "y".repeat(16) });
    const hook = await createOk(app, user, "https://example.com/256", { secret: "z".repeat(256) });
    assert.equal(await countWebhooks(app.deps.sql), 2);

    const before = await snapshot(app.deps.sql);
    for (const [label, json, path] of bad) {
      // The same refusals on PATCH, sending only the offending field.
      const field = Object.keys(json).find((k) => k === path)!;
      if (label === "active on create") continue; // active is a PATCH field
      const err = await expectError(await patch(app, user, hook.id, { [field]: json[field] }), 400, "VALIDATION_ERROR");
      assert.ok((err.details as { path: string }[]).some((d) => d.path === path), `PATCH ${label}`);
    }
    await expectError(await patch(app, user, hook.id, { active: "yes" }), 400, "VALIDATION_ERROR");
    const patchMalformed = await app.request(`/api/user-webhooks/${hook.id}`, {
      method: "PATCH",
      body: "{active:",
      headers: { "content-type": "application/json" },
      cookie: user.cookie,
    });
    await expectError(patchMalformed, 400, "VALIDATION_ERROR");
    const patchText = await app.request(`/api/user-webhooks/${hook.id}`, {
      method: "PATCH",
      body: '{"active":false}',
      headers: { "content-type": "text/plain" },
      cookie: user.cookie,
    });
    await expectError(patchText, 415, "UNSUPPORTED_MEDIA_TYPE");
    assert.equal(await snapshot(app.deps.sql), before);
  });
});

Deno.test("400 Webhook URL already registered, also after WHATWG normalisation, on POST and PATCH", async () => {
  await withService({}, async ({ app }) => {
    const user = await newUser(app, "pro");
    const first = await createOk(app, user, "https://EXAMPLE.com/hook");
    const duplicates = [
      "https://EXAMPLE.com/hook",
      "https://example.com/hook",
      "https://example.com:443/hook",
      "https://Example.Com:443/hook",
      "HTTPS://example.com/hook",
      "https://example.com/x/../hook",
    ];
    // Sanity of the table itself: all of these are one URL for WHATWG.
    for (const url of duplicates) assert.equal(new URL(url).href, "https://example.com/hook");
    for (const url of duplicates) {
      const res = await createRaw(app, user, { url, events: ["inbox.created"] });
      assert.deepEqual(await body(res), {
        success: false,
        error: "Webhook URL already registered",
        code: "DUPLICATE_WEBHOOK_URL",
      }, url);
      assert.equal(res.status, 400, url);
    }
    assert.equal(await countWebhooks(app.deps.sql), 1);

    // Another path, or another account, is not a duplicate.
    const second = await createOk(app, user, "https://example.com/other");
    const other = await newUser(app, "pro");
    await createOk(app, other, "https://example.com/hook");

    // PATCH onto the first webhook's URL (any spelling) is a duplicate too; onto its own URL is fine.
    const before = await snapshot(app.deps.sql);
    for (const url of ["https://example.com/hook", "https://EXAMPLE.COM:443/hook"]) {
      await expectError(
        await patch(app, user, second.id, { url }),
        400,
        "DUPLICATE_WEBHOOK_URL",
        "Webhook URL already registered",
      );
    }
    assert.equal(await snapshot(app.deps.sql), before);
    const self = await patch(app, user, first.id, { url: "https://example.com:443/hook" });
    assert.deepEqual(await body(self), { success: true });
    assert.equal(self.status, 200);
    assert.equal((await getOne(app, user, first.id)).json.url, first.url);
  });
});

Deno.test("404 Webhook not found for an unknown id and for another account's id, on every verb", async () => {
  await withService({}, async ({ app }) => {
    const alice = await newUser(app, "pro");
    const bob = await newUser(app, "business");
    const a = await createOk(app, alice, "https://alice.example.com/hook", { secret: "alice-secret-0123456789" });
    const b = await createOk(app, bob, "https://bob.example.com/hook");
    const before = await snapshot(app.deps.sql);

    for (const id of ["wh_00000000000000000000000000", "nope", a.id]) {
      const get = await app.request(`/api/user-webhooks/${id}`, { cookie: bob.cookie });
      await expectError(get, 404, "WEBHOOK_NOT_FOUND", "Webhook not found");
      for (
        const json of [
          { active: false },
          { active: true },
          { url: "https://bob.example.com/stolen" },
          { events: ["inbox.created"] },
          { secret: null },
          { secret: "bob-overwrites-it-0123" },
          {},
        ]
      ) {
        await expectError(await patch(app, bob, id, json), 404, "WEBHOOK_NOT_FOUND", "Webhook not found");
      }
      const del = await app.request(`/api/user-webhooks/${id}`, { method: "DELETE", cookie: bob.cookie });
      await expectError(del, 404, "WEBHOOK_NOT_FOUND", "Webhook not found");
    }
    assert.equal(await snapshot(app.deps.sql), before, "Bob changed nothing of Alice's");

    const bobList = await app.request("/api/user-webhooks", { cookie: bob.cookie });
    assert.deepEqual(((await bobList.json()) as Json[]).map((w) => w.id), [b.id]);
    const aliceList = await app.request("/api/user-webhooks", { cookie: alice.cookie });
    assert.deepEqual(((await aliceList.json()) as Json[]).map((w) => w.id), [a.id]);
    assert.equal((await getOne(app, alice, a.id)).status, 200);
    assert.equal((await getOne(app, alice, b.id)).status, 404);
  });
});

Deno.test("PATCH active:false disables; active:true enables and resets failureCount (spec 3.1)", async () => {
  await withService({}, async ({ app }) => {
    const user = await newUser(app, "pro");
    const hook = await createOk(app, user, "https://example.com/state");
    const failures = (n: number) => app.deps.sql`UPDATE webhooks SET failure_count = ${n} WHERE id = ${hook.id}`;

    await failures(2);
    assert.deepEqual(await body(await patch(app, user, hook.id, { active: false })), { success: true });
    let got = (await getOne(app, user, hook.id)).json;
    assert.equal(got.active, false);
    assert.equal(got.failureCount, 2, "disabling keeps the failure count");

    // Inactive -> active resets the count.
    await failures(5);
    assert.deepEqual(await body(await patch(app, user, hook.id, { active: true })), { success: true });
    got = (await getOne(app, user, hook.id)).json;
    assert.equal(got.active, true);
    assert.equal(got.failureCount, 0);

    // Active -> active resets it too.
    await failures(3);
    assert.equal((await getOne(app, user, hook.id)).json.failureCount, 3);
    assert.deepEqual(await body(await patch(app, user, hook.id, { active: true })), { success: true });
    got = (await getOne(app, user, hook.id)).json;
    assert.equal(got.active, true);
    assert.equal(got.failureCount, 0);

    // The list shows the same state.
    await failures(4);
    await (await patch(app, user, hook.id, { active: false })).body?.cancel();
    const list = await app.request("/api/user-webhooks", { cookie: user.cookie });
    const [item] = await list.json() as Json[];
    assert.equal(item!.active, false);
    assert.equal(item!.failureCount, 4);

    // Other changes do not touch the failure count.
    await (await patch(app, user, hook.id, { events: ["inbox.created"] })).body?.cancel();
    assert.equal((await getOne(app, user, hook.id)).json.failureCount, 4);
  });
});

Deno.test("PATCH url and events change what GET shows; an empty PATCH changes nothing", async () => {
  await withService({}, async ({ app }) => {
    const user = await newUser(app, "pro");
    const hook = await createOk(app, user, "https://example.com/one", { secret: "a-secret-of-16-chars" });

    const before = await snapshot(app.deps.sql);
    const empty = await patch(app, user, hook.id, {});
    assert.equal(empty.status, 200);
    assert.deepEqual(await body(empty), { success: true });
    assert.equal(await snapshot(app.deps.sql), before, "{} changes nothing, the secret included");

    const up = await patch(app, user, hook.id, {
      url: "https://hooks.example.org/two?x=1",
      events: ["inbox.expired", "inbox.created"],
    });
    assert.deepEqual(await body(up), { success: true });
    const got = (await getOne(app, user, hook.id)).json;
    assert.equal(got.url, "https://hooks.example.org/two?x=1");
    assert.deepEqual(got.events, ["inbox.expired", "inbox.created"]);
    assert.equal(got.active, true);
    assert.equal(got.createdAt, hook.createdAt);

    await (await patch(app, user, hook.id, { events: ["message.received"] })).body?.cancel();
    const again = (await getOne(app, user, hook.id)).json;
    assert.deepEqual(again.events, ["message.received"]);
    assert.equal(again.url, "https://hooks.example.org/two?x=1", "events alone leave the url");

    // A webhook can take back a URL another of its webhooks gave up.
    await (await patch(app, user, hook.id, { url: "https://example.com/three" })).body?.cancel();
    await createOk(app, user, "https://example.com/one");
    await deleteOk(app, user, hook.id);
    assert.equal(await countWebhooks(app.deps.sql, user.id), 1);
  });
});

Deno.test("an id PostgreSQL cannot even store (NUL byte) is 404 Webhook not found, never 500", async () => {
  await withService({}, async ({ app }) => {
    const user = await newUser(app, "pro");
    await createOk(app, user, "https://example.com/kept");
    const before = await snapshot(app.deps.sql);
    for (const id of ["%00", "wh_%00", "%FF", "%ED%A0%80"]) {
      for (const method of ["GET", "PATCH", "DELETE"]) {
        const res = await app.request(`/api/user-webhooks/${id}`, {
          method,
          json: method === "PATCH" ? { active: true } : undefined,
          cookie: user.cookie,
        });
        const json = await body(res);
        assert.deepEqual(
          { status: res.status, json },
          { status: 404, json: { success: false, error: "Webhook not found", code: "WEBHOOK_NOT_FOUND" } },
          `${method} /api/user-webhooks/${id}`,
        );
      }
    }
    assert.equal(await snapshot(app.deps.sql), before);
  });
});

Deno.test("a body over MAX_BODY_BYTES is 413 on POST and PATCH and changes nothing", async () => {
  await withService({}, async ({ app }) => {
    const user = await newUser(app, "pro");
    const hook = await createOk(app, user, "https://example.com/kept");
    const before = await snapshot(app.deps.sql);
    const huge = { url: `https://example.com/${"a".repeat(70_000)}`, events: ["inbox.created"] };
    await expectError(await createRaw(app, user, huge), 413, "PAYLOAD_TOO_LARGE");
    await expectError(await patch(app, user, hook.id, { url: huge.url }), 413, "PAYLOAD_TOO_LARGE");
    assert.equal(await snapshot(app.deps.sql), before);
  });
});
