/**
 * `Cache-Control: no-store` on every response under /api and /admin: mail
 * content (messages, raw, attachments), events, credentials (keys, sessions)
 * and webhook delivery logs must never be kept by a browser or proxy cache.
 * Walks every /api operation of openapi.yaml against a real server holding a
 * pro user's data (an inbox with a message and attachment received over SMTP,
 * events, a webhook with deliveries, an API key), then the answers that are
 * not a 2xx: the wait's 204, 400, 401 and 404, the event stream's headers,
 * and /admin. The service endpoints outside them keep their own caching.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import {
  ADMIN_TOKEN,
  type ApiRequestInit,
  createWebhook,
  newApiKey,
  sessionCookieOf,
  type TestApp,
} from "../_helpers/app.ts";
import { withService } from "../_helpers/harness.ts";
import { createInbox } from "../inboxes/_support.ts";
import { sendMail } from "../messages/_support.ts";

type Json = Record<string, unknown>;

interface YamlDoc {
  paths: Record<string, Record<string, { operationId: string }>>;
}

const yamlDoc = parse(await Deno.readTextFile(new URL("../../openapi.yaml", import.meta.url))) as YamlDoc;

/** Every operation of openapi.yaml under /api: `operationId` -> `METHOD /path`. */
const API_OPERATIONS = new Map(
  Object.entries(yamlDoc.paths).filter(([path]) => path.startsWith("/api/")).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => [op.operationId, `${method.toUpperCase()} ${path}`] as const)
  ),
);

/** One request the walk makes, and the status it must get (proving the data was there). */
interface Step {
  method: string;
  path: string;
  init?: ApiRequestInit;
  status: number;
}

async function json(res: Response): Promise<Json> {
  return await res.json() as Json;
}

/**
 * Sends the step and asserts its status; a response without `Cache-Control:
 * no-store` is added to `missing` (so one run names all of them). Returns the response unread.
 */
async function send(app: TestApp, label: string, step: Step, missing: string[]): Promise<Response> {
  const res = await app.request(step.path, { ...step.init, method: step.method });
  if (res.status !== step.status) {
    assert.fail(`${label}: ${step.method} ${step.path} answered ${res.status}: ${await res.text()}`);
  }
  const cacheControl = res.headers.get("cache-control");
  if (cacheControl !== "no-store") missing.push(`${label} (${res.status}): ${cacheControl}`);
  return res;
}

Deno.test("every /api and /admin response sends Cache-Control: no-store, errors, 204 and the event stream included", async () => {
  await withService({ receiver: true, smtp: true, user: "pro" }, async ({ app, smtp, user, receiver }) => {
    const cookie = user.cookie;
    // As tests/_helpers/app.ts newUser registers every user.
    const password = "correct horse";
    const as = { cookie };

    // The data: a webhook of every inbox and message event, two inboxes, two messages (one with an attachment).
    const hook = await createWebhook(app, user, receiver.url("/hook"), ["inbox.created", "message.received"]);
    const inbox = await createInbox(app, user);
    const spareInbox = await createInbox(app, user);
    await sendMail(smtp.port, {
      to: inbox.address,
      subject: "Your code",
      text: "Your verification code is 482913.",
      attachments: [{ filename: "invoice.pdf", content: "%PDF-1.4 invoice", contentType: "application/pdf" }],
    });
    await sendMail(smtp.port, { to: inbox.address, subject: "Second", text: "to delete" });
    assert.ok(await app.deps.deliveries.queue.runOnce() > 0, "deliveries were sent");
    const messages = (await json(await app.request(`/api/inboxes/${inbox.id}/messages`, as))).data as Json[];
    const first = messages.find((m) => m.subject === "Your code")!;
    const second = messages.find((m) => m.subject === "Second")!;
    assert.ok(first && second, JSON.stringify(messages));
    const message = await json(await app.request(`/api/inboxes/${inbox.id}/messages/${first.id}`, as));
    const attachmentId = (message.attachments as Json[])[0]!.id as string;
    const deliveries = (await json(await app.request(`/api/user-webhooks/${hook}/deliveries`, as))).data as Json[];
    const key = await newApiKey(app, user, "spare");
    const spareHook = await createWebhook(app, user, receiver.url("/spare"));
    const msg = `/api/inboxes/${inbox.id}/messages`;
    // The logout ends a session of its own, not the one the walk uses.
    const login = await app.request("/api/auth/login", { method: "POST", json: { email: user.email, password } });
    const otherSession = sessionCookieOf(login);
    await login.body?.cancel();
    // The stream's 200 comes with its headers, before any frame; the walk then leaves it.
    const streamClient = new AbortController();

    const steps: Record<string, Step> = {
      register: {
        method: "POST",
        path: "/api/auth/register",
        init: { json: { email: `nostore-${crypto.randomUUID().slice(0, 8)}@example.com`, password } },
        status: 201,
      },
      login: {
        method: "POST",
        path: "/api/auth/login",
        init: { json: { email: user.email, password } },
        status: 200,
      },
      getMe: { method: "GET", path: "/api/me", init: as, status: 200 },
      createApiKey: { method: "POST", path: "/api/api-keys", init: { json: { name: "ci" }, cookie }, status: 201 },
      listApiKeys: { method: "GET", path: "/api/api-keys", init: as, status: 200 },
      deleteApiKey: { method: "DELETE", path: `/api/api-keys/${key.id}`, init: as, status: 200 },
      listWebhooks: { method: "GET", path: "/api/user-webhooks", init: as, status: 200 },
      createWebhook: {
        method: "POST",
        path: "/api/user-webhooks",
        init: {
          json: { url: receiver.url("/other"), events: ["inbox.expired"], secret: "whsec-0123456789abcdef" },
          cookie,
        },
        status: 201,
      },
      getWebhook: { method: "GET", path: `/api/user-webhooks/${hook}`, init: as, status: 200 },
      updateWebhook: {
        method: "PATCH",
        path: `/api/user-webhooks/${hook}`,
        init: { json: { active: true }, cookie },
        status: 200,
      },
      deleteWebhook: { method: "DELETE", path: `/api/user-webhooks/${spareHook}`, init: as, status: 200 },
      testWebhook: { method: "POST", path: `/api/user-webhooks/${hook}/test`, init: as, status: 200 },
      listDeliveries: { method: "GET", path: `/api/user-webhooks/${hook}/deliveries`, init: as, status: 200 },
      redeliver: {
        method: "POST",
        path: `/api/user-webhooks/${hook}/deliveries/${deliveries[0]!.id}/redeliver`,
        init: as,
        status: 202,
      },
      rotateWebhookSecret: {
        method: "POST",
        path: `/api/user-webhooks/${hook}/rotate-secret`,
        init: { json: {}, cookie },
        status: 200,
      },
      recoverDeliveries: {
        method: "POST",
        path: `/api/user-webhooks/${hook}/recover`,
        init: { json: { since: "2000-01-01T00:00:00Z", dryRun: true }, cookie },
        status: 200,
      },
      createInbox: { method: "POST", path: "/api/inboxes", init: { json: {}, cookie }, status: 201 },
      listInboxes: { method: "GET", path: "/api/inboxes", init: as, status: 200 },
      getInbox: { method: "GET", path: `/api/inboxes/${inbox.id}`, init: as, status: 200 },
      deleteInbox: { method: "DELETE", path: `/api/inboxes/${spareInbox.id}`, init: as, status: 200 },
      listMessages: { method: "GET", path: msg, init: as, status: 200 },
      waitForMessage: { method: "GET", path: `${msg}/wait?timeoutMs=0`, init: as, status: 200 },
      getMessage: { method: "GET", path: `${msg}/${first.id}`, init: as, status: 200 },
      deleteMessage: { method: "DELETE", path: `${msg}/${second.id}`, init: as, status: 200 },
      getRawMessage: { method: "GET", path: `${msg}/${first.id}/raw`, init: as, status: 200 },
      getAttachment: { method: "GET", path: `${msg}/${first.id}/attachments/${attachmentId}`, init: as, status: 200 },
      listEvents: { method: "GET", path: "/api/events", init: as, status: 200 },
      streamEvents: {
        method: "GET",
        path: "/api/events/stream",
        init: { cookie, signal: streamClient.signal },
        status: 200,
      },
      logout: { method: "POST", path: "/api/auth/logout", init: { cookie: otherSession }, status: 200 },
    };

    // Every /api operation of the document has its step, and each step is an operation of the document.
    assert.deepEqual([...Object.keys(steps)].sort(), [...API_OPERATIONS.keys()].sort(), "one step per /api operation");
    for (const [id, step] of Object.entries(steps)) {
      const [method, template] = API_OPERATIONS.get(id)!.split(" ") as [string, string];
      assert.equal(step.method, method, id);
      const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}(\\?.*)?$`);
      assert.match(step.path, pattern, id);
    }

    const missing: string[] = [];
    for (const [id, step] of Object.entries(steps)) {
      const res = await send(app, id, step, missing);
      if (id === "getRawMessage") {
        assert.match(await res.text(), /482913/, "the raw message carries the code");
      } else if (id === "streamEvents") {
        assert.equal(res.headers.get("content-type"), "text/event-stream");
        streamClient.abort();
        await res.body?.cancel().catch(() => {});
      } else {
        await res.body?.cancel();
      }
    }

    // What is not a 2xx: nothing new for the wait, refusals, unknown ids and paths, an API key, /admin.
    const others: Array<[string, Step]> = [
      ["wait 204", { method: "GET", path: `${msg}/wait?timeoutMs=0&after=${first.id}`, init: as, status: 204 }],
      ["wait 404", {
        method: "GET",
        path: "/api/inboxes/inb_unknown/messages/wait?timeoutMs=0",
        init: as,
        status: 404,
      }],
      ["wait 400", { method: "GET", path: `${msg}/wait?since=0000-01-01T00:00:00Z`, init: as, status: 400 }],
      ["stream 400", { method: "GET", path: "/api/events/stream?after=", init: as, status: 400 }],
      ["raw 404", { method: "GET", path: `${msg}/msg_unknown/raw`, init: as, status: 404 }],
      ["events 401", { method: "GET", path: "/api/events", status: 401 }],
      ["unknown /api path", { method: "GET", path: "/api/nothing-here", init: as, status: 404 }],
      ["malformed JSON", {
        method: "POST",
        path: "/api/inboxes",
        init: { body: "{", headers: { "content-type": "application/json" }, cookie },
        status: 400,
      }],
      ["messages with an API key", {
        method: "GET",
        path: msg,
        init: { auth: (await newApiKey(app, user)).key },
        status: 200,
      }],
      ["admin find", {
        method: "GET",
        path: `/admin/accounts?email=${user.email}`,
        init: { auth: ADMIN_TOKEN },
        status: 200,
      }],
      ["admin 401", {
        method: "GET",
        path: "/admin/accounts?email=x@example.com",
        init: { auth: "wrong" },
        status: 401,
      }],
      ["admin 404", {
        method: "PATCH",
        path: "/admin/accounts/acc_unknown",
        init: { json: { plan: "pro" }, auth: ADMIN_TOKEN },
        status: 404,
      }],
    ];
    for (const [label, step] of others) {
      const res = await send(app, label, step, missing);
      await res.body?.cancel();
    }

    assert.deepEqual(missing, [], `responses without Cache-Control: no-store:\n  ${missing.join("\n  ")}`);

    // Outside /api and /admin, as before: the reference bundle may be cached, the others say nothing.
    const outside: Array<[string, string | null]> = [
      ["/docs/scalar.js", "public, max-age=86400"],
      ["/openapi.yaml", null],
      ["/healthz", null],
    ];
    for (const [path, expected] of outside) {
      const res = await app.request(path);
      assert.equal(res.status, 200, path);
      assert.equal(res.headers.get("cache-control"), expected, path);
      await res.body?.cancel();
    }
  });
});
