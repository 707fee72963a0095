/** The inbox and message endpoints over real HTTP against real PostgreSQL. */
import assert from "node:assert/strict";
import { getJson, newApiKey, newUser } from "../_helpers/app.ts";
import { body, createInbox, createInboxRaw, expectError, type Json, MAIL_DOMAIN, withInboxes } from "./_support.ts";
import { T0 } from "../_helpers/clock.ts";
import { sendRaw } from "../smtp/_smtp_client.ts";
import { createInbox as createInboxOf } from "../../src/inboxes/service.ts";
import { ApiError } from "../../src/errors.ts";

const INBOX_FIELDS = ["address", "createdAt", "expiresAt", "id"];

Deno.test("every inbox endpoint needs a credential", async () => {
  await withInboxes(async ({ app }) => {
    const cases: Array<[string, string]> = [
      ["POST", "/api/inboxes"],
      ["GET", "/api/inboxes"],
      ["GET", "/api/inboxes/inb_x"],
      ["DELETE", "/api/inboxes/inb_x"],
      ["GET", "/api/inboxes/inb_x/messages"],
      ["GET", "/api/inboxes/inb_x/messages/msg_x"],
    ];
    for (const [method, path] of cases) {
      const res = await app.request(path, { method, json: method === "POST" ? {} : undefined });
      await expectError(res, 401, "UNAUTHORIZED", "Unauthorized");
    }
  });
});

Deno.test("a free account creates, reads, lists and deletes inboxes (session and API key alike)", async () => {
  await withInboxes(async ({ app, clock }) => {
    const user = await newUser(app, "free");
    const defaults = await createInbox(app, user, {});
    assert.deepEqual(Object.keys(defaults).sort(), INBOX_FIELDS);
    assert.match(defaults.id, /^inb_/);
    assert.match(defaults.address, new RegExp(`^[a-z0-9]{12}@${MAIL_DOMAIN.replaceAll(".", "\\.")}$`));
    assert.equal(defaults.createdAt, new Date(T0).toISOString());
    assert.equal(defaults.expiresAt, new Date(T0 + 3600_000).toISOString(), "ttl defaults to an hour");

    clock.advance(1000);
    const named = await createInbox(app, user, { localPart: "qa.team_1-x", ttlSeconds: 60 });
    assert.equal(named.address, `qa.team_1-x@${MAIL_DOMAIN}`);
    assert.equal(named.expiresAt, new Date(T0 + 1000 + 60_000).toISOString());
    const longest = await createInbox(app, user, { localPart: "a".repeat(64), ttlSeconds: 604800 });
    assert.equal(longest.expiresAt, new Date(T0 + 1000 + 604_800_000).toISOString());

    const got = await getJson(app, user, `/api/inboxes/${named.id}`);
    assert.equal(got.status, 200);
    assert.deepEqual(got.json, named);

    const list = await getJson(app, user, "/api/inboxes");
    assert.equal(list.status, 200);
    assert.deepEqual(list.json, {
      data: [longest, named, defaults].sort((a, b) => b.id.localeCompare(a.id)),
      nextCursor: null,
    });

    const del = await app.request(`/api/inboxes/${named.id}`, { method: "DELETE", cookie: user.cookie });
    assert.equal(del.status, 200);
    assert.deepEqual(await body(del), { success: true });
    await expectError(
      await app.request(`/api/inboxes/${named.id}`, { cookie: user.cookie }),
      404,
      "INBOX_NOT_FOUND",
      "Inbox not found",
    );
    await expectError(
      await app.request(`/api/inboxes/${named.id}`, { method: "DELETE", cookie: user.cookie }),
      404,
      "INBOX_NOT_FOUND",
      "Inbox not found",
    );

    // An API key (of a paid account: free accounts have none) works the same.
    const pro = await newUser(app, "pro");
    const { key } = await newApiKey(app, pro);
    const viaKey = await app.request("/api/inboxes", { method: "POST", json: {}, auth: key });
    assert.equal(viaKey.status, 201);
    const created = await body(viaKey);
    const listed = await app.request("/api/inboxes", { auth: key });
    assert.deepEqual((await body(listed)).data, [created]);
  });
});

Deno.test("deleting an inbox deletes its messages and emits no event", async () => {
  await withInboxes(async ({ app, smtp, receiver }) => {
    const user = await newUser(app, "pro");
    const res = await app.request("/api/user-webhooks", {
      method: "POST",
      json: { url: receiver.url("/hook"), events: ["inbox.expired"] },
      cookie: user.cookie,
    });
    assert.equal(res.status, 201);
    await res.body?.cancel();
    const inbox = await createInbox(app, user, { localPart: "gone" });
    const sent = await sendRaw(smtp.port, { from: "s@example.com", to: [inbox.address] }, "Subject: x\r\n\r\nhi");
    assert.equal(sent.data?.code, 250);
    assert.equal((await app.deps.sql`SELECT count(*)::int AS n FROM messages`)[0]!.n, 1);

    const events = async () => (await app.deps.sql`SELECT type FROM events ORDER BY seq`).map((r) => r.type);
    // Every event is kept in the log: the creation and the message, none of them inbox.expired.
    assert.deepEqual(await events(), ["inbox.created", "message.received"]);
    const del = await app.request(`/api/inboxes/${inbox.id}`, { method: "DELETE", cookie: user.cookie });
    assert.equal(del.status, 200);
    await del.body?.cancel();
    assert.equal((await app.deps.sql`SELECT count(*)::int AS n FROM messages`)[0]!.n, 0);
    assert.equal((await app.deps.sql`SELECT count(*)::int AS n FROM inboxes`)[0]!.n, 0);
    assert.deepEqual(await events(), ["inbox.created", "message.received"], "deletion emits nothing");
    assert.equal((await app.deps.sql`SELECT count(*)::int AS n FROM deliveries`)[0]!.n, 0, "nothing to deliver");
    // The address is free again at once.
    await createInbox(app, user, { localPart: "gone" });
  });
});

Deno.test("validation errors are 400 VALIDATION_ERROR with details and create nothing", async () => {
  await withInboxes(async ({ app }) => {
    const user = await newUser(app, "free");
    const cases: Array<[unknown, string]> = [
      [{ ttlSeconds: 59 }, "ttlSeconds"],
      [{ ttlSeconds: 604801 }, "ttlSeconds"],
      [{ ttlSeconds: 60.5 }, "ttlSeconds"],
      [{ ttlSeconds: "3600" }, "ttlSeconds"],
      [{ localPart: "Alice" }, "localPart"],
      [{ localPart: "al ice" }, "localPart"],
      [{ localPart: "alice@x" }, "localPart"],
      [{ localPart: "" }, "localPart"],
      [{ localPart: ".alice" }, "localPart"],
      [{ localPart: "alice-" }, "localPart"],
      [{ localPart: "a".repeat(65) }, "localPart"],
      [{ localPart: "ümlaut" }, "localPart"],
      [{ localPart: "ok", extra: 1 }, "extra"],
    ];
    for (const [json, path] of cases) {
      const err = await expectError(await createInboxRaw(app, user, json), 400, "VALIDATION_ERROR");
      assert.ok((err.details as { path: string }[]).some((d) => d.path === path), JSON.stringify(err));
    }
    const malformed = await app.request("/api/inboxes", {
      method: "POST",
      body: "{nope",
      headers: { "content-type": "application/json" },
      cookie: user.cookie,
    });
    await expectError(malformed, 400, "VALIDATION_ERROR");
    const form = await app.request("/api/inboxes", {
      method: "POST",
      body: "localPart=x",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      cookie: user.cookie,
    });
    await expectError(form, 415, "UNSUPPORTED_MEDIA_TYPE");
    const huge = await app.request("/api/inboxes", {
      method: "POST",
      body: JSON.stringify({ localPart: "x".repeat(70_000) }),
      headers: { "content-type": "application/json" },
      cookie: user.cookie,
    });
    await expectError(huge, 413, "PAYLOAD_TOO_LARGE");
    assert.equal((await app.deps.sql`SELECT count(*)::int AS n FROM inboxes`)[0]!.n, 0);
  });
});

Deno.test("an inbox for an account deleted under a still-valid credential is 401 and writes nothing", async () => {
  await withInboxes(async ({ app, db }) => {
    // The lock of the account and the insert go to the server together: the
    // insert then fails on the foreign key, and the answer is still the 401.
    await assert.rejects(
      createInboxOf(app.deps, "acc_gone", { localPart: "orphan" }),
      (err) => err instanceof ApiError && err.status === 401 && err.code === "UNAUTHORIZED",
    );
    const [row] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM inboxes`;
    assert.equal(row!.n, 0);
  });
});

Deno.test("an address held by a live inbox of any account is ADDRESS_TAKEN", async () => {
  await withInboxes(async ({ app, clock }) => {
    const alice = await newUser(app, "free");
    const bob = await newUser(app, "pro");
    const first = await createInbox(app, alice, { localPart: "shared", ttlSeconds: 60 });
    for (const user of [alice, bob]) {
      await expectError(
        await createInboxRaw(app, user, { localPart: "shared" }),
        400,
        "ADDRESS_TAKEN",
        "Address already taken",
      );
    }
    // Concurrent creations of one address: exactly one wins.
    const results = await Promise.all(
      Array.from({ length: 5 }, () => createInboxRaw(app, bob, { localPart: "race" })),
    );
    const statuses = await Promise.all(results.map(async (r) => (await r.body?.cancel(), r.status)));
    assert.deepEqual(statuses.sort(), [201, 400, 400, 400, 400]);

    // Once the holder has expired (swept or not), the address can be taken again.
    clock.advance(60_000);
    const again = await createInbox(app, bob, { localPart: "shared" });
    assert.notEqual(again.id, first.id);
    await expectError(await app.request(`/api/inboxes/${first.id}`, { cookie: alice.cookie }), 404, "INBOX_NOT_FOUND");
  });
});

Deno.test("another account's inboxes and messages are 404 on every endpoint", async () => {
  await withInboxes(async ({ app, smtp }) => {
    const owner = await newUser(app, "free");
    const other = await newUser(app, "pro");
    const inbox = await createInbox(app, owner, { localPart: "private" });
    const sent = await sendRaw(smtp.port, { from: "s@example.com", to: [inbox.address] }, "Subject: secret\r\n\r\nx");
    assert.equal(sent.data?.code, 250);
    const messages = await getJson(app, owner, `/api/inboxes/${inbox.id}/messages`);
    const messageId = (messages.json.data as Json[])[0]!.id as string;
    const mine = await createInbox(app, other, { localPart: "mine" });

    const paths = [
      `/api/inboxes/${inbox.id}`,
      `/api/inboxes/${inbox.id}/messages`,
      `/api/inboxes/${inbox.id}/messages/${messageId}`,
      // The other's own inbox with the owner's message id: still not theirs.
      `/api/inboxes/${mine.id}/messages/${messageId}`,
    ];
    for (const path of paths) {
      const res = await app.request(path, { cookie: other.cookie });
      const code = path.startsWith(`/api/inboxes/${mine.id}`) ? "MESSAGE_NOT_FOUND" : "INBOX_NOT_FOUND";
      await expectError(res, 404, code);
    }
    await expectError(
      await app.request(`/api/inboxes/${inbox.id}`, { method: "DELETE", cookie: other.cookie }),
      404,
      "INBOX_NOT_FOUND",
    );
    const list = await getJson(app, other, "/api/inboxes");
    assert.deepEqual((list.json.data as Json[]).map((i) => i.id), [mine.id]);

    // Unknown ids.
    await expectError(await app.request("/api/inboxes/inb_unknown", { cookie: owner.cookie }), 404, "INBOX_NOT_FOUND");
    await expectError(
      await app.request(`/api/inboxes/${inbox.id}/messages/msg_unknown`, { cookie: owner.cookie }),
      404,
      "MESSAGE_NOT_FOUND",
      "Message not found",
    );
    // The owner still has everything.
    const still = await getJson(app, owner, `/api/inboxes/${inbox.id}/messages/${messageId}`);
    assert.equal(still.status, 200);
    assert.equal(still.json.subject, "secret");
  });
});

Deno.test("inboxes page newest first with cursors; bad limits and cursors are 400", async () => {
  await withInboxes(async ({ app, clock }) => {
    // Pro: 25 inboxes are over the Free plan's 10.
    const user = await newUser(app, "pro");
    const created: string[] = [];
    for (let i = 0; i < 25; i++) {
      created.push((await createInbox(app, user, { localPart: `box${i}` })).id);
      clock.advance(1000);
    }
    const seen: string[] = [];
    const sizes: number[] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor ? `?limit=10&cursor=${encodeURIComponent(cursor)}` : "?limit=10";
      const page = await getJson(app, user, `/api/inboxes${query}`);
      assert.equal(page.status, 200, JSON.stringify(page.json));
      const data = page.json.data as Json[];
      sizes.push(data.length);
      seen.push(...data.map((d) => d.id as string));
      cursor = page.json.nextCursor as string | null;
    } while (cursor !== null);
    assert.deepEqual(sizes, [10, 10, 5]);
    assert.deepEqual(seen, [...created].reverse(), "newest first, each once");

    const defaultPage = await getJson(app, user, "/api/inboxes");
    assert.equal((defaultPage.json.data as Json[]).length, 20, "default page size");

    for (const query of ["?limit=0", "?limit=101", "?limit=abc", "?cursor=not-a-cursor", "?cursor=WyJ4Il0"]) {
      await expectError(await app.request(`/api/inboxes${query}`, { cookie: user.cookie }), 400, "VALIDATION_ERROR");
    }
    await expectError(
      await app.request(`/api/inboxes/${created[0]}/messages?cursor=bad`, { cookie: user.cookie }),
      400,
      "VALIDATION_ERROR",
    );
  });
});

Deno.test("messages page newest first with cursors", async () => {
  await withInboxes(async ({ app, clock, smtp }) => {
    const user = await newUser(app, "free");
    const inbox = await createInbox(app, user, { localPart: "many" });
    for (let i = 0; i < 5; i++) {
      const sent = await sendRaw(smtp.port, { from: "s@example.com", to: [inbox.address] }, `Subject: m${i}\r\n\r\nx`);
      assert.equal(sent.data?.code, 250);
      clock.advance(1000);
    }
    const subjects: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = cursor ? `?limit=2&cursor=${encodeURIComponent(cursor)}` : "?limit=2";
      const page = await getJson(app, user, `/api/inboxes/${inbox.id}/messages${query}`);
      assert.equal(page.status, 200, JSON.stringify(page.json));
      subjects.push(...(page.json.data as Json[]).map((d) => d.subject as string));
      cursor = page.json.nextCursor as string | null;
      pages++;
    } while (cursor !== null);
    assert.equal(pages, 3);
    assert.deepEqual(subjects, ["m4", "m3", "m2", "m1", "m0"]);
  });
});
