/**
 * The typed client against the real service (PostgreSQL, HTTP on a port, SMTP,
 * deliveries to a real HTTPS receiver): every operation of openapi.yaml is
 * called through a client wrapper, and the last step fails if one was not.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import {
  type ApiErrorBody,
  type ClientOptions,
  createClient,
  type InboxServiceClient,
  InboxServiceError,
  type Middleware,
  parseWebhookEvent,
  UnexpectedMessageError,
  WaitTimeoutError,
  type Webhook,
} from "../../src/client/mod.ts";
import { sendMail } from "../messages/_support.ts";
import { ADMIN_TOKEN, newApiKey } from "../_helpers/app.ts";
import { Webhook as StandardWebhook } from "npm:standardwebhooks@1.1.1";
import { standardWebhooksKeyOf } from "../_helpers/secret_forms.ts";
import { startHarness } from "../_helpers/harness.ts";

// Compile-time checks that openapi-fetch's typing comes through the wrappers.
type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
type ResultOf<F extends (...args: never[]) => Promise<unknown>> = Awaited<ReturnType<F>>;
type GetWebhook = ResultOf<InboxServiceClient["webhooks"]["get"]>;
const _errorIsTheErrorBody: Equals<NonNullable<GetWebhook["error"]>, ApiErrorBody> = true;
const _dataIsTheWebhook: Equals<NonNullable<GetWebhook["data"]>, Webhook> = true;
void [_errorIsTheErrorBody, _dataIsTheWebhook];

const SECRET = "client-test-secret-0123456789";
const PASSWORD = "correct horse battery";

/** Operations of openapi.yaml, keyed `METHOD /path`. */
async function specOperations(): Promise<Map<string, string>> {
  const doc = parse(await Deno.readTextFile(new URL("../../openapi.yaml", import.meta.url)));
  const ops = new Map<string, string>();
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, { operationId?: string }>>)) {
    for (const [method, op] of Object.entries(item)) {
      if (op && typeof op === "object" && op.operationId) ops.set(`${method.toUpperCase()} ${path}`, op.operationId);
    }
  }
  return ops;
}

/** Asserts an API error: status, code, and the typed body. */
function expectError(
  result: { error?: ApiErrorBody | undefined; response: Response },
  status: number,
  code: string,
): void {
  assert.equal(result.response.status, status);
  assert.ok(result.error, `expected an error ${status}`);
  assert.equal(result.error.success, false);
  assert.equal(result.error.code, code, JSON.stringify(result.error));
}

/** Asserts a success and returns its data. */
function ok<T>(result: { data?: T; error?: unknown; response: Response }, status: number): T {
  assert.equal(result.response.status, status, JSON.stringify(result.error));
  assert.equal(result.error, undefined);
  assert.ok(result.data !== undefined);
  return result.data;
}

Deno.test("the client drives every operation of the real service", async (t) => {
  // The wall clock: signatures are checked against the real time.
  const h = await startHarness({ receiver: true, smtp: true, startDeliveries: true, systemClock: true });
  const { app, receiver, smtp } = h;

  // Every client records the operations it called (method and OpenAPI path).
  const called = new Set<string>();
  const recorder: Middleware = {
    onRequest({ request, schemaPath }) {
      called.add(`${request.method} ${schemaPath}`);
    },
  };
  const client = (opts: Omit<ClientOptions, "baseUrl"> = {}) => {
    const c = createClient({ baseUrl: app.baseUrl, ...opts });
    c.use(recorder);
    return c;
  };

  try {
    const anonymous = client();
    const email = `client-${crypto.randomUUID().slice(0, 8)}@example.com`;
    let accountId = "";
    let apiKey = "";
    let webhookId = "";
    let inboxId = "";
    let address = "";

    await t.step("health and readiness", async () => {
      assert.deepEqual(ok(await anonymous.health(), 200), { status: "ok" });
      assert.deepEqual(ok(await anonymous.ready(), 200), { status: "ok" });
    });

    await t.step("admin: create an account, find it by email and change its plan", async () => {
      const wrong = client({ adminToken: "not-the-admin-token-000" });
      expectError(await wrong.admin.createAccount({ email, password: PASSWORD, plan: "pro" }), 401, "UNAUTHORIZED");
      const admin = client({ adminToken: ADMIN_TOKEN });
      const created = ok(await admin.admin.createAccount({ email, password: PASSWORD, plan: "pro" }), 201);
      assert.equal(created.plan, "pro");
      accountId = created.id;
      assert.deepEqual(ok(await admin.admin.findAccounts(email.toUpperCase()), 200), { data: [created] });
      assert.deepEqual(ok(await admin.admin.findAccounts("nobody@example.com"), 200), { data: [] });
      const updated = ok(await admin.admin.updateAccount(accountId, { plan: "business" }), 200);
      assert.deepEqual(updated, { ...created, plan: "business" });
      expectError(await admin.admin.updateAccount("acc_missing", { plan: "pro" }), 404, "ACCOUNT_NOT_FOUND");
    });

    await t.step("register, me, logout, login: the client keeps the session cookie", async () => {
      const visitor = client();
      const other = `visitor-${crypto.randomUUID().slice(0, 8)}@example.com`;
      const account = ok(await visitor.auth.register({ email: other, password: PASSWORD }), 201);
      assert.equal(account.plan, "free");
      assert.match(visitor.cookie ?? "", /^session=/);
      assert.deepEqual(ok(await visitor.me(), 200), account);
      expectError(await visitor.auth.register({ email: other, password: PASSWORD }), 400, "EMAIL_TAKEN");
      assert.deepEqual(ok(await visitor.auth.logout(), 200), { success: true });
      assert.equal(visitor.cookie, undefined);
      expectError(await visitor.me(), 401, "UNAUTHORIZED");
      expectError(await visitor.auth.login({ email: other, password: "wrong password" }), 401, "INVALID_CREDENTIALS");
      ok(await visitor.auth.login({ email: other, password: PASSWORD }), 200);
      assert.equal(ok(await visitor.me(), 200).id, account.id);
      // A free account gets a typed 403 on API keys.
      expectError(await visitor.apiKeys.create({ name: "nope" }), 403, "PLAN_REQUIRED");
    });

    await t.step("API keys: create with a session, use, list, revoke", async () => {
      const session = client();
      assert.equal(ok(await session.auth.login({ email, password: PASSWORD }), 200).plan, "business");
      const created = ok(await session.apiKeys.create({ name: "ci" }), 201);
      assert.ok(created.key.startsWith(created.keyPrefix));
      apiKey = created.key;
      const spare = ok(await session.apiKeys.create({ name: "spare" }), 201);
      const res = await session.apiKeys.list();
      const keys = ok(res, 200);
      assert.deepEqual(keys.map((k) => k.name).sort(), ["ci", "spare"]);
      assert.ok(keys.every((k) => !("key" in k)));
      assert.match(res.response.headers.get("ratelimit-policy") ?? "", /"api-keys-list";q=\d+;w=60/);

      const keyed = client({ apiKey });
      assert.equal(ok(await keyed.me(), 200).id, accountId);
      const spareClient = client({ apiKey: spare.key });
      assert.equal(ok(await spareClient.me(), 200).id, accountId);
      assert.deepEqual(ok(await keyed.apiKeys.delete(spare.id), 200), { success: true });
      expectError(await spareClient.me(), 401, "UNAUTHORIZED");
      expectError(await keyed.apiKeys.delete(spare.id), 404, "API_KEY_NOT_FOUND");
      const after = ok(await keyed.apiKeys.list(), 200);
      assert.ok(after.find((k) => k.name === "ci")?.lastUsedAt, "lastUsedAt is set once the key was used");
    });

    const keyed = () => client({ apiKey });

    await t.step("webhooks: create, list, get, update, and a signed test event", async () => {
      const c = keyed();
      expectError(
        await c.webhooks.create({ url: "http://example.com/hook", events: ["inbox.created"] }),
        400,
        "VALIDATION_ERROR",
      );
      const created = ok(
        await c.webhooks.create({ url: receiver.url("/hook"), events: ["inbox.created"], secret: SECRET }),
        201,
      );
      webhookId = created.id;
      assert.deepEqual(created.events, ["inbox.created"]);
      assert.ok(!("secret" in created));
      const list = ok(await c.webhooks.list(), 200);
      assert.deepEqual(list.map((w) => w.id), [webhookId]);
      const one = ok(await c.webhooks.get(webhookId), 200);
      assert.equal(one.failureCount, 0);
      assert.equal(one.lastFailureReason, null);
      const patch = { events: ["inbox.created", "message.received"] as const };
      assert.deepEqual(ok(await c.webhooks.update(webhookId, { events: [...patch.events] }), 200), { success: true });
      assert.deepEqual([...ok(await c.webhooks.get(webhookId), 200).events].sort(), [...patch.events]);

      const result = ok(await c.webhooks.test(webhookId), 200);
      assert.equal(result.success, true, JSON.stringify(result));
      assert.equal(result.responseStatus, 200);
      assert.equal(result.responseBody, "ok");
      const [request] = await receiver.waitFor(1);
      const event = await parseWebhookEvent(request!.body, request!.headers, SECRET);
      assert.equal(event.type, "test");
      if (event.type === "test") assert.equal(event.data.webhookId, webhookId);
      expectError(await c.webhooks.get("wh_missing"), 404, "WEBHOOK_NOT_FOUND");
    });

    await t.step("inboxes: create (emits a signed inbox.created), list, get", async () => {
      const c = keyed();
      const localPart = `client-${crypto.randomUUID().slice(0, 6)}`;
      const inbox = ok(await c.inboxes.create({ localPart, ttlSeconds: 600 }), 201);
      inboxId = inbox.id;
      address = inbox.address;
      assert.equal(address, `${localPart}@inbox.localhost`);
      expectError(await c.inboxes.create({ localPart }), 400, "ADDRESS_TAKEN");
      const list = ok(await c.inboxes.list({ limit: 10 }), 200);
      assert.deepEqual(list.data.map((i) => i.id), [inboxId]);
      assert.equal(list.nextCursor, null);
      assert.deepEqual(ok(await c.inboxes.get(inboxId), 200), inbox);
      expectError(await c.inboxes.get("inb_missing"), 404, "INBOX_NOT_FOUND");

      const [, delivery] = await receiver.waitFor(2, 10_000);
      const event = await parseWebhookEvent(delivery!.body, delivery!.headers, SECRET);
      assert.equal(event.type, "inbox.created");
      if (event.type === "inbox.created") assert.deepEqual(event.data.inboxId, inboxId);
    });

    await t.step("messages: mail over SMTP, then list and get it", async () => {
      await sendMail(smtp.port, {
        from: "sender@example.com",
        to: address,
        subject: "Hello from the client test",
        text: "plain body",
      });
      const c = keyed();
      const list = ok(await c.messages.list(inboxId), 200);
      assert.equal(list.data.length, 1);
      const summary = list.data[0]!;
      assert.equal(summary.subject, "Hello from the client test");
      const message = ok(await c.messages.get(inboxId, summary.id), 200);
      assert.equal(message.text?.trim(), "plain body");
      assert.equal(message.from, summary.from);
      expectError(await c.messages.get(inboxId, "msg_missing"), 404, "MESSAGE_NOT_FOUND");
      // The subscribed webhook hears about it too.
      const requests = await receiver.waitFor(3, 10_000);
      assert.equal(requests[2]!.headers["x-webhook-event"], "message.received");
    });

    await t.step("deliveries: list the log and redeliver an event", async () => {
      const c = keyed();
      const log = ok(await c.deliveries.list(webhookId, { limit: 50 }), 200);
      const first = log.data.find((d) => d.eventType === "inbox.created");
      assert.ok(first, JSON.stringify(log));
      assert.equal(first.status, "succeeded");
      const again = ok(await c.deliveries.redeliver(webhookId, first.id), 202);
      assert.equal(again.eventId, first.eventId);
      assert.notEqual(again.id, first.id);
      assert.equal(again.status, "pending");
      const requests = await receiver.waitFor(4, 10_000);
      const redelivered = requests[3]!;
      assert.equal(redelivered.headers["webhook-id"], first.eventId);
      assert.equal(redelivered.headers["x-delivery-id"], again.id);
      expectError(await c.deliveries.redeliver(webhookId, "dlv_missing"), 404, "DELIVERY_NOT_FOUND");
      const page = ok(await c.deliveries.list(webhookId, { limit: 1 }), 200);
      assert.equal(page.data.length, 1);
      assert.ok(page.nextCursor);
      const next = ok(await c.deliveries.list(webhookId, { limit: 1, cursor: page.nextCursor }), 200);
      assert.notEqual(next.data[0]?.id, page.data[0]?.id);
    });

    await t.step("deliveries: recover what failed (nothing has), a dry run and a real one", async () => {
      const c = keyed();
      const since = new Date(Date.now() - 3_600_000);
      assert.deepEqual(ok(await c.deliveries.recover(webhookId, { since, dryRun: true }), 200), { wouldQueue: 0 });
      assert.deepEqual(ok(await c.deliveries.recover(webhookId, { since, until: new Date() }), 202), { queued: 0 });
      expectError(await c.deliveries.recover(webhookId, { since, until: new Date(0) }), 400, "VALIDATION_ERROR");
    });

    await t.step("webhooks: rotate the secret; during the overlap a test event verifies with either", async () => {
      const c = keyed();
      const rotated = ok(await c.webhooks.rotateSecret(webhookId), 200);
      assert.match(rotated.secret!, /^whsec_[A-Za-z0-9+/]{32}$/);
      assert.ok(Date.parse(rotated.previousSecretExpiresAt!) > Date.now() + 86_000_000, "a day of overlap");
      const before = receiver.requests.length;
      ok(await c.webhooks.test(webhookId), 200);
      const [request] = (await receiver.waitFor(before + 1)).slice(before);
      const event = await parseWebhookEvent(request!.body, request!.headers, rotated.secret!);
      assert.equal(event.type, "test");
      new StandardWebhook(rotated.secret!).verify(request!.body, request!.headers);
      new StandardWebhook(standardWebhooksKeyOf({ secret: SECRET, decoded: false })).verify(
        request!.body,
        request!.headers,
      );
      expectError(await c.webhooks.rotateSecret(webhookId, { overlapSeconds: -1 }), 400, "VALIDATION_ERROR");
    });

    await t.step("the CI loop: waitFor a code, expectNone, raw, attachments, delete", async () => {
      const c = keyed();
      const first = ok(await c.messages.list(inboxId), 200).data[0]!;
      // Nothing new yet: expectNone resolves, waitFor with a short timeout rejects with the typed error.
      await c.messages.expectNone(inboxId, { after: first.id, withinMs: 100 });
      await assert.rejects(
        c.messages.waitFor(inboxId, { after: first.id, timeoutMs: 100 }),
        (err) => err instanceof WaitTimeoutError && err.timeoutMs === 100,
      );
      const waiting = c.messages.waitFor(inboxId, { after: first.id, subject: "verify", timeoutMs: 20_000 });
      await sendMail(smtp.port, {
        to: address,
        subject: "Please verify your email",
        html: "<p>Your code is <strong>604 118</strong>.</p>",
        attachments: [{ filename: "terms.txt", content: "the terms" }],
      });
      const message = await waiting;
      assert.deepEqual(message.codes, ["604118"]);
      await assert.rejects(
        c.messages.expectNone(inboxId, { withinMs: 5_000, from: "sender@example.com" }),
        (err) => err instanceof UnexpectedMessageError && err.received.id === first.id,
      );
      const raw = new TextDecoder().decode(await c.messages.raw(inboxId, message.id));
      assert.match(raw, /^Subject: Please verify your email\r$/m);
      const attachment = await c.attachments.get(inboxId, message.id, message.attachments[0]!.id);
      assert.equal(new TextDecoder().decode(attachment.content), "the terms");
      assert.match(attachment.contentType, /^text\/plain/);
      await assert.rejects(
        c.attachments.get(inboxId, message.id, "att_missing"),
        (err) => err instanceof InboxServiceError && err.status === 404 && err.body?.code === "ATTACHMENT_NOT_FOUND",
      );
      assert.deepEqual(ok(await c.messages.delete(inboxId, message.id), 200), { success: true });
      expectError(await c.messages.delete(inboxId, message.id), 404, "MESSAGE_NOT_FOUND");
      await assert.rejects(
        c.messages.raw(inboxId, message.id),
        (err) => err instanceof InboxServiceError && err.body?.code === "MESSAGE_NOT_FOUND",
      );
      await assert.rejects(
        c.messages.waitFor("inb_missing", { timeoutMs: 0 }),
        (err) => err instanceof InboxServiceError && err.status === 404,
      );
    });

    await t.step("events: list the log, then follow it live from a cursor", async () => {
      const c = keyed();
      const page = ok(await c.events.list({ types: ["inbox.created"] }), 200);
      assert.equal(page.data.length, 1);
      assert.equal(page.nextCursor, page.data[0]!.id);
      assert.equal(page.data[0]!.data.inboxId, inboxId);
      expectError(await c.events.list({ after: "evt_missing" }), 400, "VALIDATION_ERROR");
      const stop = new AbortController();
      const seen: string[] = [];
      const following = (async () => {
        for await (
          const event of c.events.stream({ after: page.data[0]!.id, types: ["inbox.created"], signal: stop.signal })
        ) {
          seen.push(event.data.inboxId as string);
          if (seen.length === 2) break;
        }
      })();
      const a = ok(await c.inboxes.create({}), 201);
      const b = ok(await c.inboxes.create({}), 201);
      await following;
      assert.deepEqual(seen, [a.id, b.id]);
      stop.abort();
    });

    await t.step("delete an inbox and a webhook", async () => {
      const c = keyed();
      assert.deepEqual(ok(await c.inboxes.delete(inboxId), 200), { success: true });
      expectError(await c.inboxes.delete(inboxId), 404, "INBOX_NOT_FOUND");
      assert.deepEqual(ok(await c.webhooks.delete(webhookId), 200), { success: true });
      expectError(await c.webhooks.delete(webhookId), 404, "WEBHOOK_NOT_FOUND");
    });

    await t.step("coverage: every operation of openapi.yaml was called through the client", async () => {
      const spec = await specOperations();
      const missing = [...spec].filter(([key]) => !called.has(key)).map(([key, id]) => `${id} (${key})`);
      assert.deepEqual(missing, [], `operations no client call exercised: ${missing.join(", ")}`);
      const unknown = [...called].filter((key) => !spec.has(key));
      assert.deepEqual(unknown, [], "the client only calls documented operations");
    });
  } finally {
    await h.close();
  }
});

Deno.test("the agent pattern through the client: one inbox, a key that reads only it for an hour, and its code", async () => {
  const h = await startHarness({ smtp: true, user: "pro", systemClock: true });
  try {
    const owner = createClient({ baseUrl: h.app.baseUrl, apiKey: (await newApiKey(h.app, h.user)).key });
    const inbox = (await owner.inboxes.create({})).data!;
    const made = await owner.apiKeys.create({
      name: "agent",
      scopes: ["inboxes:read"],
      inboxIds: [inbox.id],
      expiresInSeconds: 3600,
    });
    assert.deepEqual(made.data?.scopes, ["inboxes:read"]);
    const agent = createClient({ baseUrl: h.app.baseUrl, apiKey: made.data!.key });
    const waiting = agent.messages.waitFor(inbox.id, { subject: "Verify", timeoutMs: 10_000 });
    await sendMail(h.smtp.port, { to: inbox.address, subject: "Verify your email", text: "Your code is 482913" });
    assert.deepEqual((await waiting).codes, ["482913"]);
    const refused = await agent.inboxes.create({});
    assert.equal(refused.error?.code, "INSUFFICIENT_SCOPE");
  } finally {
    await h.close();
  }
});
