/**
 * `POST /api/user-webhooks/{id}/test` and `.../deliveries/{deliveryId}/redeliver`
 * make the service send or queue requests to a receiver: both have per-account
 * per-minute limits by plan (429 RATE_LIMITED with Retry-After and the
 * RateLimit headers), checked after the plan and before the webhook lookup.
 *
 * Before the limits, 15 test calls sent 15 requests and 40 redeliveries
 * queued 40 attempts.
 */
import assert from "node:assert/strict";
import { createWebhook, newUser, type TestApp, type User } from "../_helpers/app.ts";
import { type Harness, startHarness } from "../_helpers/harness.ts";
import { deliveryCount } from "../deliveries/_support.ts";
import type { Plan } from "../../src/accounts/schemas.ts";

/** The default redelivery limits (REDELIVERIES_PER_MINUTE). */
const REDELIVERIES = { pro: 30, business: 100 } as const;

/** An app that may reach the test receiver (trusted `localhost`). */
type Fixture = Harness<{ receiver: true }>;

function fixture(env: Record<string, string> = {}): Promise<Fixture> {
  return startHarness({ receiver: true, env });
}

/** A user of `plan` with a webhook on the receiver. */
async function userWithWebhook(f: Fixture, plan: Plan): Promise<{ user: User; webhookId: string }> {
  const user = await newUser(f.app, plan);
  return { user, webhookId: await createWebhook(f.app, user, f.receiver.url("/hook")) };
}

/** One delivered event of the webhook; returns the id of its delivery. */
async function oneDelivery(f: Fixture, user: User, webhookId: string): Promise<string> {
  const inbox = await f.app.request("/api/inboxes", { method: "POST", json: {}, cookie: user.cookie });
  assert.equal(inbox.status, 201);
  await inbox.body?.cancel();
  await f.app.deps.deliveries.queue.drain();
  const log = await (await f.app.request(`/api/user-webhooks/${webhookId}/deliveries`, { cookie: user.cookie }))
    .json();
  return log.data[0].id;
}

/** POSTs `path` `n` times; returns the responses' statuses and the last response's headers and body. */
async function burst(app: TestApp, path: string, cookie: string, n: number) {
  const statuses: number[] = [];
  let last: { headers: Headers; body: Record<string, unknown> } | undefined;
  for (let i = 0; i < n; i++) {
    const res = await app.request(path, { method: "POST", cookie });
    statuses.push(res.status);
    last = { headers: res.headers, body: await res.json() };
  }
  return { statuses, last: last! };
}

Deno.test("test endpoint: 10 per minute on Pro, then 429 with Retry-After and RateLimit headers, and nothing sent", async () => {
  const f = await fixture();
  try {
    const { user, webhookId } = await userWithWebhook(f, "pro");
    const path = `/api/user-webhooks/${webhookId}/test`;

    const first = await f.app.request(path, { method: "POST", cookie: user.cookie });
    assert.equal(first.status, 200);
    assert.equal(first.headers.get("ratelimit-policy"), `"webhook-test";q=10;w=60`);
    assert.equal(first.headers.get("ratelimit"), `"webhook-test";r=9;t=60`);
    await first.body?.cancel();

    const { statuses, last } = await burst(f.app, path, user.cookie, 14);
    console.log(
      `15 POST /test (pro): 200 x ${statuses.filter((s) => s === 200).length + 1}, 429 x ${
        statuses.filter((s) => s === 429).length
      }; receiver got ${f.receiver.requests.length}`,
    );
    assert.deepEqual(statuses, [...Array(9).fill(200), ...Array(5).fill(429)]);
    assert.equal(last.body.code, "RATE_LIMITED");
    assert.equal(last.headers.get("retry-after"), "60");
    assert.equal(last.headers.get("ratelimit"), `"webhook-test";r=0;t=60`);
    assert.equal(f.receiver.requests.length, 10, "the refused calls sent nothing");

    // A sliding minute: 30 s on, the slots are still taken; a minute on, they are free again.
    f.clock.advance(30_000);
    const still = await f.app.request(path, { method: "POST", cookie: user.cookie });
    assert.equal(still.status, 429);
    assert.equal(still.headers.get("retry-after"), "30");
    await still.body?.cancel();
    f.clock.advance(30_000);
    const again = await f.app.request(path, { method: "POST", cookie: user.cookie });
    assert.equal(again.status, 200);
    await again.body?.cancel();
    assert.equal(f.receiver.requests.length, 11);
  } finally {
    await f.close();
  }
});

Deno.test("redeliver: 30 per minute on Pro, 100 on Business; refused calls queue nothing", async () => {
  const f = await fixture();
  try {
    for (const plan of ["pro", "business"] as const) {
      const { user, webhookId } = await userWithWebhook(f, plan);
      const deliveryId = await oneDelivery(f, user, webhookId);
      const path = `/api/user-webhooks/${webhookId}/deliveries/${deliveryId}/redeliver`;
      const limit = REDELIVERIES[plan];
      const before = await deliveryCount(f);
      const { statuses, last } = await burst(f.app, path, user.cookie, limit + 5);
      console.log(
        `${limit + 5} POST /redeliver (${plan}): 202 x ${statuses.filter((s) => s === 202).length}, 429 x ${
          statuses.filter((s) => s === 429).length
        }; queued ${(await deliveryCount(f)) - before}`,
      );
      assert.deepEqual(statuses, [...Array(limit).fill(202), ...Array(5).fill(429)], plan);
      assert.equal(last.body.code, "RATE_LIMITED");
      assert.equal(last.headers.get("retry-after"), "60");
      assert.equal(last.headers.get("ratelimit-policy"), `"webhook-redeliver";q=${limit};w=60`);
      assert.equal(await deliveryCount(f) - before, limit, "exactly one queued attempt per accepted call");
    }
  } finally {
    await f.close();
  }
});

Deno.test("the limits are per account, and Business gets 30 test calls a minute", async () => {
  const f = await fixture();
  try {
    const pro = await userWithWebhook(f, "pro");
    const business = await userWithWebhook(f, "business");
    const proRun = await burst(f.app, `/api/user-webhooks/${pro.webhookId}/test`, pro.user.cookie, 11);
    assert.deepEqual(proRun.statuses, [...Array(10).fill(200), 429]);
    // Another account is not touched by the first one's exhausted allowance.
    const bizRun = await burst(f.app, `/api/user-webhooks/${business.webhookId}/test`, business.user.cookie, 31);
    assert.deepEqual(bizRun.statuses, [...Array(30).fill(200), 429]);
    assert.equal(bizRun.last.headers.get("ratelimit-policy"), `"webhook-test";q=30;w=60`);
  } finally {
    await f.close();
  }
});

Deno.test("order of checks: 401 -> 403 plan -> 429 -> 404; a free account never reaches the limit", async () => {
  const f = await fixture();
  try {
    const { user } = await userWithWebhook(f, "pro");
    const unknown = "/api/user-webhooks/wh_unknown/test";
    // Unknown webhooks count (every request that reaches the limiter does), and 404 comes after 429.
    const run = await burst(f.app, unknown, user.cookie, 11);
    assert.deepEqual(run.statuses, [...Array(10).fill(404), 429]);
    const redo = await burst(f.app, "/api/user-webhooks/wh_unknown/deliveries/dlv_unknown/redeliver", user.cookie, 31);
    assert.deepEqual(redo.statuses, [...Array(30).fill(404), 429]);

    const anonymous = await f.app.request(unknown, { method: "POST" });
    assert.equal(anonymous.status, 401);
    await anonymous.body?.cancel();

    const free = await newUser(f.app, "free");
    const freeRun = await burst(f.app, unknown, free.cookie, 12);
    assert.deepEqual(freeRun.statuses, Array(12).fill(403));
    assert.equal(freeRun.last.body.code, "PLAN_REQUIRED");
    assert.equal(f.receiver.requests.length, 0);
  } finally {
    await f.close();
  }
});

Deno.test("a limit reached on one instance holds on another instance on the same database", async () => {
  const f = await fixture();
  const two = await f.startInstance();
  try {
    const { user, webhookId } = await userWithWebhook(f, "pro");
    const path = `/api/user-webhooks/${webhookId}/test`;
    const one = await burst(f.app, path, user.cookie, 10);
    assert.deepEqual(one.statuses, Array(10).fill(200));
    const other = await burst(two, path, user.cookie, 1);
    assert.deepEqual(other.statuses, [429]);
    assert.equal(f.receiver.requests.length, 10);
  } finally {
    await two.close();
    await f.close();
  }
});

Deno.test("WEBHOOK_TESTS_PER_MINUTE and REDELIVERIES_PER_MINUTE set the limits per plan", async () => {
  const f = await fixture({ WEBHOOK_TESTS_PER_MINUTE: "pro=2", REDELIVERIES_PER_MINUTE: "pro=3,business=4" });
  try {
    const { user, webhookId } = await userWithWebhook(f, "pro");
    const tests = await burst(f.app, `/api/user-webhooks/${webhookId}/test`, user.cookie, 3);
    assert.deepEqual(tests.statuses, [200, 200, 429]);
    assert.equal(tests.last.headers.get("ratelimit-policy"), `"webhook-test";q=2;w=60`);
    const deliveryId = await oneDelivery(f, user, webhookId);
    const path = `/api/user-webhooks/${webhookId}/deliveries/${deliveryId}/redeliver`;
    assert.deepEqual((await burst(f.app, path, user.cookie, 4)).statuses, [202, 202, 202, 429]);
  } finally {
    await f.close();
  }
});
