/**
 * Webhook limits (spec 7, 8; design "Order of checks"): at most 10 webhooks
 * per account, at most 10 creations per account in any rolling hour (shared
 * by instances, surviving restarts), and the order in which refusals apply.
 */
import assert from "node:assert/strict";
import { newUser, type TestApp, type User } from "../_helpers/app.ts";
import { withService } from "../_helpers/harness.ts";
import { body, countWebhooks, createOk, createRaw, deleteOk, expectError, type Json, snapshot } from "./_support.ts";

const MINUTE = 60_000;
const LIMIT_BODY = { success: false, error: "Maximum 10 webhooks allowed", code: "WEBHOOK_LIMIT" };

/** Creates `n` webhooks with distinct URLs; returns their ids. */
async function createMany(app: TestApp, user: User, n: number, tag: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await createOk(app, user, `https://example.com/${tag}/${i}`)).id);
  return ids;
}

/** Expects a 429 RESOURCE_LIMIT_EXCEEDED and returns its Retry-After in seconds. */
async function expect429(res: Response): Promise<number> {
  await expectError(res, 429, "RESOURCE_LIMIT_EXCEEDED");
  const retryAfter = res.headers.get("retry-after");
  assert.ok(retryAfter !== null && /^\d+$/.test(retryAfter), `Retry-After: ${retryAfter}`);
  return Number(retryAfter);
}

/** Status and code of a creation attempt, body consumed. */
async function attempt(app: TestApp, user: User, json: unknown): Promise<string> {
  const res = await createRaw(app, user, json);
  const b = await body(res);
  return `${res.status} ${b.code ?? ""}`.trim();
}

Deno.test("the 11th webhook is 400 Maximum 10 webhooks allowed and inserts nothing", async () => {
  await withService({}, async ({ app, clock }) => {
    const user = await newUser(app, "business");
    const ids = await createMany(app, user, 10, "cap");
    const res = await createRaw(app, user, { url: "https://example.com/cap/10", events: ["inbox.created"] });
    assert.equal(res.status, 400);
    assert.deepEqual(await body(res), LIMIT_BODY);
    assert.equal(await countWebhooks(app.deps.sql, user.id), 10);

    // The cap is per account.
    const other = await newUser(app, "pro");
    await createOk(app, other, "https://example.com/cap/10");

    // Once the hour has passed, deleting one frees one slot, and only one.
    clock.advance(61 * MINUTE);
    await deleteOk(app, user, ids[0]!);
    await createOk(app, user, "https://example.com/cap/again");
    const again = await createRaw(app, user, { url: "https://example.com/cap/11", events: ["inbox.created"] });
    assert.deepEqual(await body(again), LIMIT_BODY);
    assert.equal(again.status, 400);
    assert.equal(await countWebhooks(app.deps.sql, user.id), 10);
  });
});

Deno.test("hourly cap: deletions give no quota back; 429 with an honest Retry-After; room after the hour", async () => {
  await withService({}, async ({ app, clock }) => {
    const user = await newUser(app, "pro");
    const first = await createMany(app, user, 5, "a"); // at T0
    clock.advance(10 * MINUTE);
    const second = await createMany(app, user, 5, "b"); // at T0 + 10 min
    for (const id of [...first, ...second]) await deleteOk(app, user, id);
    assert.equal(await countWebhooks(app.deps.sql, user.id), 0);

    clock.advance(10 * MINUTE); // T0 + 20 min
    const eleventh = { url: "https://example.com/c/0", events: ["message.received"] };
    const retry = await expect429(await createRaw(app, user, eleventh));
    assert.equal(retry, 40 * 60, "the T0 creations leave the hour at T0 + 60 min");
    // A refusal uses no quota and does not move the answer.
    assert.equal(await expect429(await createRaw(app, user, eleventh)), 40 * 60);
    assert.equal(await countWebhooks(app.deps.sql, user.id), 0, "nothing inserted");

    clock.advance((retry - 1) * 1000);
    assert.equal(await expect429(await createRaw(app, user, eleventh)), 1, "one second early is still refused");
    clock.advance(1000); // exactly Retry-After seconds after the first refusal
    await createOk(app, user, eleventh.url);
    // The five T0 creations left; the five at T0 + 10 min still count: four more fit.
    await createMany(app, user, 4, "d");
    const retryAgain = await expect429(
      await createRaw(app, user, { url: "https://example.com/e/0", events: ["inbox.created"] }),
    );
    assert.equal(retryAgain, 10 * 60, "the T0 + 10 min creations leave at T0 + 70 min");
    assert.equal(await countWebhooks(app.deps.sql, user.id), 5);

    // The window is per account.
    const other = await newUser(app, "pro");
    await createOk(app, other, "https://example.com/other");
  });
});

Deno.test("refused creations (400) use no hourly quota", async () => {
  await withService({}, async ({ app }) => {
    const user = await newUser(app, "pro");
    const kept = await createOk(app, user, "https://example.com/kept");
    const refused: unknown[] = [
      { url: "http://example.com/x", events: ["inbox.created"] },
      { url: "https://10.0.0.1/", events: ["inbox.created"] },
      { url: "https://localhost/", events: ["inbox.created"] },
      { url: "https://example.com/kept", events: ["inbox.created"] },
      { url: "https://example.com/y", events: [] },
      { url: "https://example.com/y", events: ["inbox.created"], secret: "short" },
    ];
    for (let round = 0; round < 2; round++) {
      for (const json of refused) assert.match(await attempt(app, user, json), /^400 /);
    }
    await createMany(app, user, 9, "more");
    await deleteOk(app, user, kept.id);
    await expect429(await createRaw(app, user, { url: "https://example.com/z", events: ["inbox.created"] }));
  });
});

Deno.test("the hourly count survives a restart and is shared by two instances on one database", async () => {
  await withService({}, async (h) => {
    let app = h.app;
    const { db, clock } = h;
    const user = await newUser(app, "pro");
    for (const id of await createMany(app, user, 10, "r")) await deleteOk(app, user, id);
    const next = { url: "https://example.com/after-restart", events: ["inbox.created"] };
    assert.equal(await expect429(await createRaw(app, user, next)), 3600);

    await app.close();
    app = await h.startInstance();
    assert.equal(await expect429(await createRaw(app, user, next)), 3600, "still refused after a restart");

    // Two instances, each with its own pool: six creations on one and four on the other fill the hour.
    const second = await h.startInstance();
    const shared = await newUser(app, "business");
    const ids = [...await createMany(app, shared, 6, "s1"), ...await createMany(second, shared, 4, "s2")];
    for (const id of ids) await deleteOk(second, shared, id);
    const more = { url: "https://example.com/shared-more", events: ["inbox.created"] };
    await expect429(await createRaw(app, shared, more));
    await expect429(await createRaw(second, shared, more));
    assert.equal(await countWebhooks(db.sql, shared.id), 0);

    clock.advance(60 * MINUTE);
    await createOk(second, shared, more.url);
  });
});

Deno.test("order of checks: count before hourly, unsafe and duplicate before count, plan before validation", async () => {
  await withService({}, async ({ app }) => {
    const user = await newUser(app, "pro");
    await createMany(app, user, 10, "o"); // count cap and hourly cap both reached
    const before = await snapshot(app.deps.sql);

    const bothCaps = await createRaw(app, user, { url: "https://example.com/o/new", events: ["inbox.created"] });
    assert.equal(bothCaps.status, 400);
    assert.deepEqual(await body(bothCaps), LIMIT_BODY);
    assert.equal(
      await attempt(app, user, { url: "https://example.com/o/3", events: ["inbox.created"] }),
      "400 DUPLICATE_WEBHOOK_URL",
    );
    assert.equal(
      await attempt(app, user, { url: "https://EXAMPLE.com:443/o/3", events: ["inbox.created"] }),
      "400 DUPLICATE_WEBHOOK_URL",
    );
    assert.equal(
      await attempt(app, user, { url: "https://127.0.0.1/", events: ["inbox.created"] }),
      "400 INVALID_WEBHOOK_URL",
    );
    assert.equal(
      await attempt(app, user, { url: "http://example.com/", events: ["inbox.created"] }),
      "400 VALIDATION_ERROR",
    );
    assert.equal(await attempt(app, user, { url: "https://example.com/z", events: ["test"] }), "400 VALIDATION_ERROR");
    // An unsafe URL that is also a "duplicate" spelling is still unsafe first.
    assert.equal(
      await attempt(app, user, { url: "https://[::1]/o/3", events: ["inbox.created"] }),
      "400 INVALID_WEBHOOK_URL",
    );

    // With fewer than 10 webhooks but the hour used up, an unsafe URL is still 400, not 429.
    const [row] = await app.deps.sql`SELECT id FROM webhooks WHERE account_id = ${user.id} LIMIT 1`;
    await deleteOk(app, user, row!.id as string);
    assert.equal(
      await attempt(app, user, { url: "https://169.254.169.254/", events: ["inbox.created"] }),
      "400 INVALID_WEBHOOK_URL",
    );
    assert.equal(
      await attempt(app, user, { url: "https://example.com/o/4", events: ["inbox.created"] }),
      "400 DUPLICATE_WEBHOOK_URL",
    );
    assert.equal(
      await attempt(app, user, { url: "ftp://example.com/", events: ["inbox.created"] }),
      "400 VALIDATION_ERROR",
    );
    await expect429(await createRaw(app, user, { url: "https://example.com/o/new", events: ["inbox.created"] }));
    assert.equal(await countWebhooks(app.deps.sql, user.id), 9);
    assert.notEqual(await snapshot(app.deps.sql), before, "the delete above did change the table");

    // A free account: the plan is checked before anything about the body.
    const free = await newUser(app, "free");
    for (
      const json of [
        { url: "http://example.com/", events: ["inbox.created"] },
        { url: "https://127.0.0.1/", events: ["inbox.created"] },
        { events: [] },
        { url: "https://example.com/", events: ["inbox.created"], extra: 1 },
      ]
    ) {
      assert.equal(await attempt(app, free, json), "403 PLAN_REQUIRED", JSON.stringify(json));
    }
    for (const [type, raw] of [["text/plain", "hello"], ["application/json", "{broken"]]) {
      const res = await app.request("/api/user-webhooks", {
        method: "POST",
        body: raw,
        headers: { "content-type": type! },
        cookie: free.cookie,
      });
      await expectError(res, 403, "PLAN_REQUIRED", "Webhooks require Pro or Business plan");
    }
    // No credential: 401 before anything else.
    const anon = await app.request("/api/user-webhooks", { method: "POST", json: { url: "http://x" } });
    await expectError(anon, 401, "UNAUTHORIZED", "Unauthorized");
    assert.equal(await countWebhooks(app.deps.sql, free.id), 0);
  });
});

Deno.test("15 concurrent creations never pass 10, on one instance or two", async () => {
  await withService({}, async (h) => {
    const { app: one, db } = h;
    const two = await h.startInstance();
    const status = async (app: TestApp, user: User, url: string): Promise<string> =>
      await attempt(app, user, { url, events: ["inbox.created"] });
    const tally = (results: string[]) => {
      const t: Json = {};
      for (const r of results) t[r] = ((t[r] as number | undefined) ?? 0) + 1;
      return t;
    };

    const a = await newUser(one, "pro");
    const single = await Promise.all(
      Array.from({ length: 15 }, (_, i) => status(one, a, `https://example.com/p/${i}`)),
    );
    assert.deepEqual(tally(single), { "201": 10, "400 WEBHOOK_LIMIT": 5 });
    assert.equal(await countWebhooks(db.sql, a.id), 10);

    const b = await newUser(one, "business");
    const split = await Promise.all(
      Array.from({ length: 15 }, (_, i) => status(i % 2 === 0 ? one : two, b, `https://example.com/q/${i}`)),
    );
    assert.deepEqual(tally(split), { "201": 10, "400 WEBHOOK_LIMIT": 5 });
    assert.equal(await countWebhooks(db.sql, b.id), 10);

    // The same URL raced: exactly one wins.
    const c = await newUser(one, "pro");
    const same = await Promise.all(
      Array.from({ length: 6 }, (_, i) => status(i % 2 === 0 ? one : two, c, "https://example.com/same")),
    );
    assert.deepEqual(tally(same), { "201": 1, "400 DUPLICATE_WEBHOOK_URL": 5 });

    // The hourly window raced: 4 used (and deleted), 10 in parallel -> 6 pass.
    const d = await newUser(one, "pro");
    for (const id of await createMany(one, d, 4, "h")) await deleteOk(one, d, id);
    const hourly = await Promise.all(
      Array.from({ length: 10 }, (_, i) => status(i % 2 === 0 ? one : two, d, `https://example.com/h2/${i}`)),
    );
    assert.deepEqual(tally(hourly), { "201": 6, "429 RESOURCE_LIMIT_EXCEEDED": 4 });
    assert.equal(await countWebhooks(db.sql, d.id), 6);
  });
});
