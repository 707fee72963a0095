/**
 * Plans bound the live inboxes an account holds (Free 10, Pro 100, Business
 * 1,000): 400 INBOX_LIMIT beyond, counted under the account's lock so
 * concurrent creations (on one instance or several) cannot race past it, and
 * expired inboxes the sweep has not removed yet do not count.
 */
import assert from "node:assert/strict";
import { ADMIN_TOKEN, newUser, startApp, type TestApp } from "../_helpers/app.ts";
import {
  body,
  createInbox,
  createInboxRaw,
  expectError,
  type Json,
  MAIL_DOMAIN,
  withInboxes,
} from "../inboxes/_support.ts";
import { newId } from "../../src/shared/ids.ts";

const FREE_LIMIT = { status: 400, code: "INBOX_LIMIT", error: "Maximum 10 inboxes on your plan" };

async function inboxesOf(app: TestApp, accountId: string): Promise<number> {
  return (await app.deps.sql`SELECT count(*)::int AS n FROM inboxes WHERE account_id = ${accountId}`)[0]!.n as number;
}

async function listed(app: TestApp, cookie: string): Promise<Json[]> {
  const res = await app.request("/api/inboxes?limit=100", { cookie });
  assert.equal(res.status, 200);
  return (await body(res)).data as Json[];
}

/** Adds live inboxes straight to the table (to reach the Pro and Business limits quickly). */
async function seedInboxes(app: TestApp, accountId: string, n: number, now: Date): Promise<void> {
  const expiresAt = new Date(now.getTime() + 3600_000);
  const rows = Array.from({ length: n }, (_, i) => ({
    id: newId("inb", now.getTime()),
    account_id: accountId,
    address: `seed-${accountId.slice(-8)}-${i}@${MAIL_DOMAIN}`.toLowerCase(),
    created_at: now,
    expires_at: expiresAt,
  }));
  await app.deps.sql`INSERT INTO inboxes ${app.deps.sql(rows)}`;
}

Deno.test("a Free account holds 10 live inboxes: the 11th is 400 INBOX_LIMIT and creates nothing", async () => {
  await withInboxes(async ({ app }) => {
    const user = await newUser(app, "free");
    for (let i = 0; i < 10; i++) await createInbox(app, user, i % 2 ? { localPart: `mine${i}` } : {});
    assert.equal(await inboxesOf(app, user.id), 10);

    await expectError(await createInboxRaw(app, user, {}), FREE_LIMIT.status, FREE_LIMIT.code, FREE_LIMIT.error);
    await expectError(
      await createInboxRaw(app, user, { localPart: "eleventh" }),
      FREE_LIMIT.status,
      FREE_LIMIT.code,
      FREE_LIMIT.error,
    );
    assert.equal(await inboxesOf(app, user.id), 10);
    assert.equal((await listed(app, user.cookie)).length, 10);

    // The refused address was not held: another account takes it.
    const other = await newUser(app, "free");
    assert.equal((await createInbox(app, other, { localPart: "eleventh" })).address, `eleventh@${MAIL_DOMAIN}`);

    // A taken address is ADDRESS_TAKEN, whatever the count (duplicate before maximum).
    await expectError(await createInboxRaw(app, user, { localPart: "mine1" }), 400, "ADDRESS_TAKEN");

    // Deleting one makes room for one.
    const [first] = await listed(app, user.cookie);
    const del = await app.request(`/api/inboxes/${first!.id}`, { method: "DELETE", cookie: user.cookie });
    assert.equal(del.status, 200);
    await createInbox(app, user, {});
    await expectError(await createInboxRaw(app, user, {}), 400, "INBOX_LIMIT");
  });
});

Deno.test("11 concurrent creations on an empty Free account, over two instances: exactly 10 are created", async () => {
  await withInboxes(async ({ app, db, clock }) => {
    const second = await startApp(await db.connect(5), { clock });
    try {
      const user = await newUser(app, "free");
      const results = await Promise.all(
        Array.from({ length: 11 }, async (_, i) => {
          const res = await createInboxRaw(i % 2 ? second : app, user, i % 3 ? {} : { localPart: `race${i}` });
          const json = await body(res);
          return res.status === 201 ? "201" : `${res.status} ${json.code}`;
        }),
      );
      const tally: Record<string, number> = {};
      for (const r of results) tally[r] = (tally[r] ?? 0) + 1;
      assert.deepEqual(tally, { "201": 10, "400 INBOX_LIMIT": 1 });
      assert.equal(await inboxesOf(app, user.id), 10);
      assert.equal((await listed(app, user.cookie)).length, 10);

      // And a burst far over the limit on a second account.
      const burst = await newUser(app, "free");
      const statuses = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          createInboxRaw(i % 2 ? second : app, burst, {}).then(async (r) => {
            await r.body?.cancel();
            return r.status;
          })),
      );
      assert.equal(statuses.filter((s) => s === 201).length, 10);
      assert.equal(statuses.filter((s) => s === 400).length, 30);
      assert.equal(await inboxesOf(app, burst.id), 10);
    } finally {
      await second.close();
    }
  });
});

Deno.test("expired inboxes the sweep has not removed yet do not count against the limit", async () => {
  await withInboxes(async ({ app, clock }) => {
    const user = await newUser(app, "free");
    await createInbox(app, user, { localPart: "short-lived", ttlSeconds: 60 });
    for (let i = 0; i < 9; i++) await createInbox(app, user, { ttlSeconds: 3600 });
    await expectError(await createInboxRaw(app, user, {}), 400, "INBOX_LIMIT");

    clock.advance(60_000); // short-lived expires now; no sweep has run.
    assert.equal(await inboxesOf(app, user.id), 10, "the expired row is still in the table");
    const fresh = await createInbox(app, user, {});
    assert.ok(fresh.id);
    assert.equal((await listed(app, user.cookie)).length, 10);
    await expectError(await createInboxRaw(app, user, {}), 400, "INBOX_LIMIT", "Maximum 10 inboxes on your plan");
  });
});

Deno.test("Pro holds 100 and Business 1000 live inboxes; a plan change counts at once", async () => {
  await withInboxes(async ({ app, clock }) => {
    const pro = await newUser(app, "pro");
    await seedInboxes(app, pro.id, 99, clock.now());
    await createInbox(app, pro, {});
    await expectError(await createInboxRaw(app, pro, {}), 400, "INBOX_LIMIT", "Maximum 100 inboxes on your plan");

    const business = await newUser(app, "business");
    await seedInboxes(app, business.id, 999, clock.now());
    await createInbox(app, business, {});
    await expectError(
      await createInboxRaw(app, business, {}),
      400,
      "INBOX_LIMIT",
      "Maximum 1000 inboxes on your plan",
    );

    // A Free account at its 10 upgraded to Pro creates its 11th at once.
    const upgraded = await newUser(app, "free");
    for (let i = 0; i < 10; i++) await createInbox(app, upgraded, {});
    await expectError(await createInboxRaw(app, upgraded, {}), 400, "INBOX_LIMIT");
    const up = await app.request(`/admin/accounts/${upgraded.id}`, {
      method: "PATCH",
      json: { plan: "pro" },
      auth: ADMIN_TOKEN,
    });
    assert.equal(up.status, 200);
    await createInbox(app, upgraded, {});
    assert.equal(await inboxesOf(app, upgraded.id), 11);
  });
});

Deno.test("INBOXES_PER_ACCOUNT sets the limit per plan; plans not named keep theirs", async () => {
  await withInboxes(async ({ app }) => {
    const pro = await newUser(app, "pro");
    for (let i = 0; i < 2; i++) await createInbox(app, pro, {});
    await expectError(await createInboxRaw(app, pro, {}), 400, "INBOX_LIMIT", "Maximum 2 inboxes on your plan");
    const free = await newUser(app, "free");
    for (let i = 0; i < 10; i++) await createInbox(app, free, {});
    await expectError(await createInboxRaw(app, free, {}), FREE_LIMIT.status, FREE_LIMIT.code, FREE_LIMIT.error);
  }, { env: { INBOXES_PER_ACCOUNT: "pro=2" } });
});
