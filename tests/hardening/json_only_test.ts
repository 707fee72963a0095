/**
 * Every mutating request that carries a body of another type than
 * `application/json` gets 415 UNSUPPORTED_MEDIA_TYPE, whether or not the
 * endpoint reads a body (design, "Security posture"): a cross-site form post
 * (text, urlencoded or multipart, the types a form can send) never reaches a
 * handler, so it changes nothing. A request with no body, or an empty one,
 * is served as before.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import { ADMIN_TOKEN, createWebhook, getJson, newApiKey, newUser } from "../_helpers/app.ts";
import { expectError } from "../_helpers/expect.ts";
import { type Harness, startHarness, withService } from "../_helpers/harness.ts";
import { createInbox } from "../inboxes/_support.ts";
import { deliveryCount } from "../deliveries/_support.ts";
import { rawRequest } from "./raw_http.ts";

/** The three body types a cross-site HTML form can send, as fetch sends them. */
const FORM_BODIES: Array<[string, () => { body: BodyInit; headers: Record<string, string> }]> = [
  ["text/plain", () => ({ body: "hello", headers: { "content-type": "text/plain" } })],
  ["urlencoded", () => ({ body: "a=1&b=2", headers: { "content-type": "application/x-www-form-urlencoded" } })],
  ["multipart", () => {
    const form = new FormData();
    form.set("a", "1");
    return { body: form, headers: {} }; // fetch sets multipart/form-data with its boundary
  }],
];

type Fixture = Harness<{ receiver: true; user: "pro" }> & { webhookId: string; inboxId: string; deliveryId: string };

/** A pro user with a webhook (pointing at a live receiver), an inbox, and the delivery of its inbox.created event. */
async function fixture(): Promise<Fixture> {
  const h = await startHarness({ receiver: true, user: "pro" });
  try {
    const webhookId = await createWebhook(h.app, h.user, h.receiver.url("/hook"));
    const inbox = await createInbox(h.app, h.user);
    const log = (await getJson(h.app, h.user, `/api/user-webhooks/${webhookId}/deliveries`)).json.data as {
      id: string;
    }[];
    assert.equal(log.length, 1, "the inbox.created delivery is queued");
    return { ...h, webhookId, inboxId: inbox.id, deliveryId: log[0]!.id };
  } catch (err) {
    await h.close();
    throw err;
  }
}

async function status(res: Response): Promise<number> {
  await res.body?.cancel();
  return res.status;
}

Deno.test("body-less mutating endpoints answer 415 to text, urlencoded and multipart bodies, and change nothing", async () => {
  const f = await fixture();
  try {
    const key = await newApiKey(f.app, f.user);
    const { webhookId, inboxId, deliveryId } = f;
    const paths: Array<[string, string]> = [
      ["POST", "/api/auth/logout"],
      ["POST", `/api/user-webhooks/${webhookId}/test`],
      ["POST", `/api/user-webhooks/${webhookId}/deliveries/${deliveryId}/redeliver`],
      ["DELETE", `/api/api-keys/${key.id}`],
      ["DELETE", `/api/user-webhooks/${webhookId}`],
      ["DELETE", `/api/inboxes/${inboxId}`],
    ];
    const deliveriesBefore = await deliveryCount(f);
    for (const [method, path] of paths) {
      for (const [name, make] of FORM_BODIES) {
        const { body, headers } = make();
        const res = await f.app.request(path, { method, body, headers, cookie: f.user.cookie });
        assert.equal(res.headers.get("set-cookie"), null, `${method} ${path} (${name}) set no cookie`);
        await expectError(res, 415, "UNSUPPORTED_MEDIA_TYPE");
      }
    }

    // Nothing changed: the session, the key, the webhook and the inbox are there; nothing was sent or queued.
    assert.equal(await status(await f.app.request("/api/me", { cookie: f.user.cookie })), 200, "still logged in");
    assert.equal(await status(await f.app.request("/api/me", { auth: key.key })), 200, "the key still works");
    assert.equal(await status(await f.app.request(`/api/user-webhooks/${webhookId}`, { cookie: f.user.cookie })), 200);
    assert.equal(await status(await f.app.request(`/api/inboxes/${inboxId}`, { cookie: f.user.cookie })), 200);
    assert.equal(f.receiver.requests.length, 0, "no test event was sent");
    assert.equal(await deliveryCount(f), deliveriesBefore, "no redelivery was queued");
  } finally {
    await f.close();
  }
});

Deno.test("the same requests with no body, an empty body or a JSON body are served", async () => {
  const f = await fixture();
  try {
    const { webhookId, deliveryId, inboxId } = f;
    const cookie = f.user.cookie;
    // fetch sends `Content-Length: 0` for a POST without a body.
    const test = await f.app.request(`/api/user-webhooks/${webhookId}/test`, { method: "POST", cookie });
    assert.equal(test.status, 200);
    assert.equal((await test.json()).success, true);
    assert.equal(f.receiver.requests.length, 1, "the test event was sent");

    // An empty body of any declared type is no body.
    const redo = await f.app.request(`/api/user-webhooks/${webhookId}/deliveries/${deliveryId}/redeliver`, {
      method: "POST",
      body: "",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      cookie,
    });
    assert.equal(redo.status, 202, await redo.clone().text());
    assert.equal((await redo.json()).status, "pending");

    // A JSON body is accepted (and ignored) where none is read.
    const key = await newApiKey(f.app, f.user);
    assert.equal(
      await status(await f.app.request(`/api/api-keys/${key.id}`, { method: "DELETE", json: {}, cookie })),
      200,
    );
    // No Content-Length and no Transfer-Encoding at all: no body.
    const raw = await rawRequest(f.app.baseUrl, "DELETE", `/api/inboxes/${inboxId}`, { cookie });
    assert.equal(raw.status, 200, raw.text);
    const zero = await rawRequest(f.app.baseUrl, "DELETE", `/api/user-webhooks/${webhookId}`, {
      cookie,
      "content-type": "text/plain",
      "content-length": "0",
    });
    assert.equal(zero.status, 200, zero.text);

    const logout = await f.app.request("/api/auth/logout", { method: "POST", cookie });
    assert.equal(logout.status, 200);
    assert.match(logout.headers.get("set-cookie") ?? "", /^session=;/);
    await logout.body?.cancel();
    assert.equal(await status(await f.app.request("/api/me", { cookie })), 401, "the session ended");
  } finally {
    await f.close();
  }
});

Deno.test("415 comes after 401, 403 and 429, and before validation", async () => {
  const f = await fixture();
  try {
    const text = { body: "x", headers: { "content-type": "text/plain" } };
    const { webhookId } = f;
    // 401: no credential.
    await expectError(
      await f.app.request(`/api/user-webhooks/${webhookId}/test`, { method: "POST", ...text }),
      401,
      "UNAUTHORIZED",
    );
    // 403: a free account on a webhook path.
    const free = await newUser(f.app, "free");
    const plan = await f.app.request(`/api/user-webhooks/${webhookId}/test`, {
      method: "POST",
      ...text,
      cookie: free.cookie,
    });
    await expectError(plan, 403, "PLAN_REQUIRED");
    // 429: DELETE /api/api-keys/{id} allows 10 a minute on Pro; the refused ones count too.
    const seen: number[] = [];
    for (let i = 0; i < 11; i++) {
      seen.push(
        await status(await f.app.request("/api/api-keys/key_x", { method: "DELETE", ...text, cookie: f.user.cookie })),
      );
    }
    assert.deepEqual(seen, [...Array(10).fill(415), 429]);
    // 415 before 400: an invalid path id never gets as far as validation or lookup.
    await expectError(
      await f.app.request("/api/inboxes/%00", { method: "DELETE", ...text, cookie: f.user.cookie }),
      415,
      "UNSUPPORTED_MEDIA_TYPE",
    );
  } finally {
    await f.close();
  }
});

Deno.test("every mutating operation of openapi.yaml refuses a text/plain body", async () => {
  await withService({}, async ({ app }) => {
    const user = await newUser(app, "business");
    const doc = parse(await Deno.readTextFile(new URL("../../openapi.yaml", import.meta.url)));
    const checked: string[] = [];
    for (const [template, item] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
      for (const method of ["post", "put", "patch", "delete"]) {
        if (!(method in item)) continue;
        const path = template.replace(/\{[^}]+\}/g, "x_unknown");
        const admin = path.startsWith("/admin/");
        const res = await app.request(path, {
          method: method.toUpperCase(),
          body: "not json",
          headers: { "content-type": "text/plain" },
          ...(admin ? { auth: ADMIN_TOKEN } : { cookie: user.cookie }),
        });
        const json = await res.json();
        assert.equal(res.status, 415, `${method.toUpperCase()} ${template}: ${JSON.stringify(json)}`);
        assert.equal(json.code, "UNSUPPORTED_MEDIA_TYPE");
        checked.push(`${method.toUpperCase()} ${template}`);
      }
    }
    assert.ok(checked.length >= 14, `mutating operations checked: ${checked.join(", ")}`);
  });
});
