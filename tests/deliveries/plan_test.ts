/**
 * The delivery routes (test endpoint, delivery log, redelivery) apply the
 * webhook plan check themselves: a free account gets 403 on each, in the full
 * app and with the delivery routes mounted alone, so the check does not depend
 * on the webhook routes being mounted first.
 */
import assert from "node:assert/strict";
import { createRouter } from "../../src/http/router.ts";
import { authenticate } from "../../src/auth/middleware.ts";
import { deliveryRoutes } from "../../src/deliveries/routes.ts";
import { handleError } from "../../src/errors.ts";
import { ADMIN_TOKEN, newUser, type TestApp, type User } from "../_helpers/app.ts";
import { expectError } from "../_helpers/expect.ts";
import { createWebhook } from "../_helpers/app.ts";
import { deliveryFixture, deliveryLog, emitInboxCreated } from "./_support.ts";

const PLAN_BODY = ["PLAN_REQUIRED", "Webhooks require Pro or Business plan"] as const;

/** The three delivery paths of a webhook and a delivery the pro user owns. */
function paths(webhookId: string, deliveryId: string): Array<[string, string]> {
  return [
    ["POST", `/api/user-webhooks/${webhookId}/test`],
    ["GET", `/api/user-webhooks/${webhookId}/deliveries`],
    ["POST", `/api/user-webhooks/${webhookId}/deliveries/${deliveryId}/redeliver`],
  ];
}

/** Moves the user to `plan` through the operator API. */
async function setPlan(app: TestApp, user: User, plan: string): Promise<void> {
  const res = await app.request(`/admin/accounts/${user.id}`, { method: "PATCH", json: { plan }, auth: ADMIN_TOKEN });
  assert.equal(res.status, 200, await res.text());
}

Deno.test("a free account gets 403 PLAN_REQUIRED on the test, delivery log and redeliver paths", async () => {
  const f = await deliveryFixture();
  try {
    const webhookId = await createWebhook(f.app, f.user, f.receiver.url("/hook"));
    await emitInboxCreated(f);
    const [delivery] = await deliveryLog(f, webhookId);
    // The owner drops to free: every delivery path of its own webhook is refused.
    await setPlan(f.app, f.user, "free");
    for (const [method, path] of paths(webhookId, delivery!.id as string)) {
      await expectError(await f.app.request(path, { method, cookie: f.user.cookie }), 403, ...PLAN_BODY);
    }
    // A free account that never had the plan is refused before any lookup (no 404 leaks existence).
    const stranger = await newUser(f.app, "free");
    for (const [method, path] of paths("wh_unknown", "dlv_unknown")) {
      await expectError(await f.app.request(path, { method, cookie: stranger.cookie }), 403, ...PLAN_BODY);
    }
    assert.equal(f.receiver.requests.length, 0, "no test event was sent");
    const rows = await f.db.sql`SELECT count(*)::int AS n FROM deliveries`;
    assert.equal(rows[0]!.n, 1, "no redelivery was queued");
  } finally {
    await f.close();
  }
});

Deno.test("the delivery routes mounted alone still refuse a free account", async () => {
  const f = await deliveryFixture();
  try {
    const free = await newUser(f.app, "free");
    const alone = createRouter();
    alone.use("/api/*", authenticate(f.app.deps));
    alone.route("/", deliveryRoutes(f.app.deps));
    alone.onError(handleError);
    for (const [method, path] of paths("wh_any", "dlv_any")) {
      const res = await alone.request(path, { method, headers: { cookie: free.cookie } });
      await expectError(res, 403, ...PLAN_BODY);
    }
  } finally {
    await f.close();
  }
});
