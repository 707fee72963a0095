/**
 * Scoped, inbox-restricted and expiring API keys over the real path: what
 * creation takes and shows; every operation of openapi.yaml refuses a key
 * that lacks the scope its `security` names (403 INSUFFICIENT_SCOPE naming
 * it) and lets one that has it through; an inbox outside `inboxIds` is 404
 * exactly as an unknown one on every path, events included; expiry ends
 * requests, open streams and waits included.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import { newUser, type TestApp, type User } from "../_helpers/app.ts";
import { body } from "../_helpers/expect.ts";
import { withService } from "../_helpers/harness.ts";
import { openSse } from "../_helpers/sse.ts";
import { waitUntil } from "../_helpers/wait.ts";
import { createInbox } from "../inboxes/_support.ts";
import { sendMail, waitersGauge } from "../messages/_support.ts";
import { OPERATION_NEEDS, SCOPES } from "../../src/auth/scopes.ts";

type Json = Record<string, unknown>;

async function makeKey(app: TestApp, user: User, grant: Json): Promise<{ res: Response; json: Json }> {
  const res = await app.request("/api/api-keys", {
    method: "POST",
    json: { name: "agent", ...grant },
    cookie: user.cookie,
  });
  return { res, json: await body(res) };
}

async function keyWith(app: TestApp, user: User, grant: Json): Promise<string> {
  const { res, json } = await makeKey(app, user, grant);
  assert.equal(res.status, 201, JSON.stringify(json));
  return json.key as string;
}

Deno.test("creation takes scopes, inboxIds and an expiry, shows them, and refuses what cannot be", async () => {
  await withService({ systemClock: true }, async ({ app }) => {
    // Business: 30 key creations a minute, and every attempt below counts.
    const user = await newUser(app, "business");
    const other = await newUser(app, "pro");
    const inbox = await createInbox(app, user);
    const theirs = await createInbox(app, other);
    const before = Date.now();
    const { res, json } = await makeKey(app, user, {
      scopes: ["inboxes:read"],
      inboxIds: [inbox.id],
      expiresInSeconds: 3600,
    });
    assert.equal(res.status, 201);
    assert.deepEqual(json.scopes, ["inboxes:read"]);
    assert.deepEqual(json.inboxIds, [inbox.id]);
    const expires = Date.parse(json.expiresAt as string);
    assert.ok(expires >= before + 3_600_000 && expires <= Date.now() + 3_600_000);
    const listed = (await body(await app.request("/api/api-keys", { cookie: user.cookie })) as unknown) as Json[];
    assert.deepEqual(listed.map((k) => [k.scopes, k.inboxIds, k.expiresAt]), [[
      ["inboxes:read"],
      [inbox.id],
      json.expiresAt,
    ]]);
    // Every scope given is no restriction: the key gets later scopes too, and shows them all.
    const full = await makeKey(app, user, { scopes: [...SCOPES].reverse() });
    assert.deepEqual(full.json.scopes, [...SCOPES]);

    const refused: [Json, string][] = [
      [{ scopes: ["inboxes:admin"] }, "scopes.0"],
      [{ scopes: [] }, "scopes"],
      [{ inboxIds: [theirs.id] }, "inboxIds"],
      [{ inboxIds: ["inb_nope"] }, "inboxIds"],
      [{ expiresAt: new Date(Date.now() - 1000).toISOString() }, "expiresAt"],
      [{ expiresAt: new Date(Date.now() + 366 * 86_400_000).toISOString() }, "expiresAt"],
      [{ expiresInSeconds: 59 }, "expiresInSeconds"],
      [{ expiresInSeconds: 31_536_001 }, "expiresInSeconds"],
      [{ expiresAt: new Date(Date.now() + 60_000).toISOString(), expiresInSeconds: 60 }, "expiresInSeconds"],
    ];
    for (const [grant, path] of refused) {
      const r = await makeKey(app, user, grant);
      assert.equal(r.res.status, 400, JSON.stringify(grant));
      assert.equal(r.json.code, "VALIDATION_ERROR");
      assert.ok((r.json.details as { path: string }[]).some((d) => d.path === path), JSON.stringify(r.json));
    }
  });
});

/** A request of an operation of openapi.yaml, with placeholders: the scope check comes before everything else. */
function requestOf(operation: string): { method: string; path: string; init: RequestInit } {
  const [method, template] = operation.split(" ") as [string, string];
  const path = template.replace(/\{[^}]+\}/g, "x_placeholder");
  const init: RequestInit = { method };
  if (method === "POST" || method === "PATCH") {
    init.headers = { "content-type": "application/json" };
    init.body = "{}";
  }
  return { method, path, init };
}

Deno.test("every operation refuses a key lacking its scope with 403 INSUFFICIENT_SCOPE naming it, and lets one with it through", async () => {
  await withService({}, async ({ app }) => {
    const user = await newUser(app, "business");
    const doc = parse(await Deno.readTextFile(new URL("../../openapi.yaml", import.meta.url)));
    const operations: [string, string[]][] = [];
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
      for (const [method, op] of Object.entries(item)) {
        const security = (op.security ?? []) as Record<string, string[]>[];
        const apiKey = security.find((s) => "apiKey" in s);
        if (apiKey) operations.push([`${method.toUpperCase()} ${path}`, apiKey.apiKey!]);
      }
    }
    // The document and the table name the same operations and the same scopes.
    assert.deepEqual(
      operations.map(([op]) => op).sort(),
      Object.keys(OPERATION_NEEDS).sort(),
      "openapi.yaml's operations with an API key are those of the table",
    );
    for (const [op, scopes] of operations) {
      const need = OPERATION_NEEDS[op as keyof typeof OPERATION_NEEDS];
      assert.deepEqual(scopes, need === "any" || need === "keys" ? [] : [need], `${op}: security scopes`);
    }
    // Two accounts: the eleven keys are more than one account may hold. The placeholders make the account moot.
    const second = await newUser(app, "business");
    const keys = new Map<string, string>();
    for (const scope of SCOPES) {
      keys.set(`without ${scope}`, await keyWith(app, user, { scopes: SCOPES.filter((s) => s !== scope) }));
      keys.set(`only ${scope}`, await keyWith(app, second, { scopes: [scope] }));
    }
    const inbox = await createInbox(app, user);
    keys.set("restricted", await keyWith(app, user, { inboxIds: [inbox.id] }));
    let walked = 0;
    for (const [operation, need] of Object.entries(OPERATION_NEEDS)) {
      const { path, init } = requestOf(operation);
      const send = (key: string) =>
        app.request(path, { ...init, headers: { ...init.headers, authorization: `Bearer ${key}` } });
      if (need === "any") continue;
      const lacking = need === "keys"
        ? [keys.get("only inboxes:read")!, keys.get("restricted")!]
        : [keys.get(`without ${need}`)!];
      for (const key of lacking) {
        const res = await send(key);
        const json = await body(res);
        assert.equal(res.status, 403, `${operation}: ${JSON.stringify(json)}`);
        assert.equal(json.code, "INSUFFICIENT_SCOPE", operation);
        if (need !== "keys") assert.ok((json.error as string).includes(need), `${operation}: ${json.error}`);
      }
      if (need !== "keys") {
        const res = await send(keys.get(`only ${need}`)!);
        // The event stream answers 200 and stays open: its status says enough.
        const text = res.status === 200 ? (await res.body?.cancel(), "") : await res.text();
        assert.ok(res.status !== 403, `${operation} with ${need}: ${res.status} ${text}`);
      }
      walked++;
    }
    assert.equal(walked, Object.values(OPERATION_NEEDS).filter((n) => n !== "any").length);
    // A path no operation has is still a 404 for a key, whatever its scopes (not a scope refusal).
    const nowhere = await app.request("/api/no-such-operation", {
      headers: { authorization: `Bearer ${keys.get("only inboxes:read")}` },
    });
    assert.equal(nowhere.status, 404);
    await nowhere.body?.cancel();
  });
});

Deno.test("a key limited to an inbox: any other inbox is 404 as an unknown one on every path; lists and events show only its own", async () => {
  await withService({ smtp: true }, async ({ app, smtp }) => {
    const user = await newUser(app, "pro");
    const mine = await createInbox(app, user);
    const other = await createInbox(app, user);
    const key = await keyWith(app, user, { inboxIds: [mine.id] });
    const auth = { authorization: `Bearer ${key}` };
    await sendMail(smtp.port, { to: mine.address, subject: "mine", text: "code 111111" });
    await sendMail(smtp.port, { to: other.address, subject: "other", text: "code 222222" });
    const messageOf = async (inboxId: string) =>
      ((await body(await app.request(`/api/inboxes/${inboxId}/messages`, { cookie: user.cookie }))).data as Json[])[0]!;
    const otherMessage = await messageOf(other.id);
    const mineMessage = await messageOf(mine.id);

    const unknown = await body(await app.request(`/api/inboxes/inb_unknown`, { headers: auth }));
    const paths = [
      `/api/inboxes/${other.id}`,
      `/api/inboxes/${other.id}/messages`,
      `/api/inboxes/${other.id}/messages/wait?timeoutMs=0`,
      `/api/inboxes/${other.id}/messages/${otherMessage.id}`,
      `/api/inboxes/${other.id}/messages/${otherMessage.id}/raw`,
      `/api/inboxes/${other.id}/messages/${otherMessage.id}/attachments/att_x`,
    ];
    for (const path of paths) {
      const res = await app.request(path, { headers: auth });
      assert.equal(res.status, 404, path);
      assert.deepEqual(await body(res), unknown, `${path}: exactly as an unknown inbox`);
    }
    for (const method of ["DELETE"]) {
      const res = await app.request(`/api/inboxes/${other.id}`, { method, headers: auth });
      assert.equal(res.status, 404);
      await res.body?.cancel();
    }
    const created = await app.request("/api/inboxes", { method: "POST", json: {}, headers: auth });
    assert.equal(created.status, 403);
    assert.equal((await body(created)).code, "INSUFFICIENT_SCOPE");

    // Its own inbox works.
    const own = await app.request(`/api/inboxes/${mine.id}/messages/${mineMessage.id}`, { headers: auth });
    assert.equal((await body(own)).subject, "mine");
    const listed = (await body(await app.request("/api/inboxes", { headers: auth }))).data as Json[];
    assert.deepEqual(listed.map((i) => i.id), [mine.id]);

    // Events: only its inbox's, on the log and the stream; a cursor of another inbox's event is not its own.
    const log = (await body(await app.request("/api/events", { headers: auth }))).data as Json[];
    assert.deepEqual(log.map((e) => [e.type, (e.data as Json).inboxId]), [
      ["inbox.created", mine.id],
      ["message.received", mine.id],
    ]);
    const all = (await body(await app.request("/api/events", { cookie: user.cookie }))).data as Json[];
    const foreign = all.find((e) => (e.data as Json).inboxId === other.id)!;
    const refused = await app.request(`/api/events?after=${foreign.id}`, { headers: auth });
    assert.equal(refused.status, 400);
    await refused.body?.cancel();
    const stream = await openSse(`${app.baseUrl}/api/events/stream?after=${log[0]!.id}`, auth);
    await stream.waitForFrames(1);
    await sendMail(smtp.port, { to: other.address, subject: "other again", text: "x" });
    await sendMail(smtp.port, { to: mine.address, subject: "mine again", text: "x" });
    await stream.waitForFrames(2);
    assert.deepEqual(stream.frames().map((f) => JSON.parse(f.data).data.inboxId), [mine.id, mine.id]);
    stream.close();
  });
});

Deno.test("an expired key is 401 on every instance's next request, and its open stream and wait end within a second", async () => {
  await withService({ systemClock: true, listen: true }, async ({ app, startInstance }) => {
    const second = await startInstance({ listen: true });
    const user = await newUser(app, "business");
    const inbox = await createInbox(app, user);
    const expiresAt = new Date(Date.now() + 1_500).toISOString();
    const key = await keyWith(app, user, { expiresAt });
    const auth = { authorization: `Bearer ${key}` };
    const stream = await openSse(`${second.baseUrl}/api/events/stream`, auth);
    const wait = fetch(`${app.baseUrl}/api/inboxes/${inbox.id}/messages/wait?timeoutMs=30000`, { headers: auth });
    await waitUntil(async () => await waitersGauge(app) === 1, 5_000, () => "the wait never held");
    const answered = await wait;
    const at = Date.now();
    assert.equal(answered.status, 401);
    await answered.body?.cancel();
    assert.ok(at - Date.parse(expiresAt) < 1_000, `answered ${at - Date.parse(expiresAt)} ms after the expiry`);
    await stream.ended;
    assert.ok(Date.now() - Date.parse(expiresAt) < 1_000, "the stream ended within a second of the expiry");
    for (const instance of [app, second]) {
      const res = await instance.request("/api/inboxes", { headers: auth });
      assert.equal(res.status, 401);
      const json = await body(res);
      assert.equal(json.code, "UNAUTHORIZED");
      assert.equal(json.hint, `This API key expired at ${expiresAt}: create a new one (POST /api/api-keys)`);
    }
    // Still listed, with its expiry, and not counted towards the limit of 10.
    const listed = (await body(await app.request("/api/api-keys", { cookie: user.cookie })) as unknown) as Json[];
    assert.deepEqual(listed.map((k) => k.expiresAt), [expiresAt]);
    for (let i = 0; i < 10; i++) await keyWith(app, user, {});
  });
});
