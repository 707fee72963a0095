/**
 * Secret rotation with an overlap, over the real path (PostgreSQL, the queue,
 * a real HTTPS receiver): during the overlap every sender carries one
 * Standard Webhooks signature per live secret, which npm standardwebhooks
 * verifies with either secret alone, and `X-Webhook-Signature` keyed with the
 * newest, which @octokit/webhooks-methods verifies; after the overlap, or
 * after a PATCH of the secret, only the current secret signs. The replaced
 * secret is stored sealed, as the current one is, and forgotten by the sweep.
 */
import assert from "node:assert/strict";
import { verify as octokitVerify } from "npm:@octokit/webhooks-methods@6.0.0";
import { Webhook as StandardWebhook } from "npm:standardwebhooks@1.1.1";
import { runSweeps } from "../../src/service/sweeps.ts";
import { createWebhook, newUser, setPlan, type TestApp, type User } from "../_helpers/app.ts";
import { startHarness } from "../_helpers/harness.ts";
import type { ReceivedRequest } from "../_helpers/receiver.ts";
import { standardWebhooksKeyOf } from "../_helpers/secret_forms.ts";
import { sleep } from "../_helpers/wait.ts";
import { body, expectError } from "../_helpers/expect.ts";

/** The first secret: not whsec_, so a Standard Webhooks library takes `whsec_` + the base64 of its UTF-8 bytes. */
const OLD = "old-plain-secret-0123456789";
const OLD_KEY = standardWebhooksKeyOf({ secret: OLD, decoded: false });

/** POST /api/user-webhooks/{id}/rotate-secret with the user's session. */
function rotate(app: TestApp, user: User, id: string, json: unknown): Promise<Response> {
  return app.request(`/api/user-webhooks/${id}/rotate-secret`, { method: "POST", json, cookie: user.cookie });
}

/** A rotation that must succeed; its body. */
async function rotateOk(
  app: TestApp,
  user: User,
  id: string,
  json: unknown = {},
): Promise<{ secret?: string; previousSecretExpiresAt: string | null }> {
  const res = await rotate(app, user, id, json);
  const out = await body(res);
  assert.equal(res.status, 200, JSON.stringify(out));
  assert.equal(res.headers.get("cache-control"), "no-store", "the answer may carry a secret");
  return out as { secret?: string; previousSecretExpiresAt: string | null };
}

/** Whether standardwebhooks accepts the request with `key` alone. */
function standardAccepts(req: ReceivedRequest, key: string): boolean {
  try {
    new StandardWebhook(key).verify(req.body, req.headers);
    return true;
  } catch {
    return false;
  }
}

/** The `v1,` signatures of the request's webhook-signature, in the order sent. */
function standardSignatures(req: ReceivedRequest): string[] {
  return (req.headers["webhook-signature"] ?? "").split(" ").filter((s) => s !== "");
}

Deno.test("rotate-secret: a generated whsec_ secret of 24 bytes, the overlap's end, the replaced secret sealed", async () => {
  const h = await startHarness({ receiver: true, user: "pro" });
  try {
    const { app, user, clock } = h;
    const id = await createWebhook(app, user, h.receiver.url("/r"), ["inbox.created"], OLD);
    const first = await rotateOk(app, user, id);
    assert.match(first.secret!, /^whsec_[A-Za-z0-9+/]{32}$/);
    assert.equal(Uint8Array.fromBase64(first.secret!.slice("whsec_".length)).length, 24);
    assert.equal(first.previousSecretExpiresAt, new Date(clock.now().getTime() + 86_400_000).toISOString());

    const [row] = await h.db.sql<{ secretCiphertext: string; previousSecretCiphertext: string }[]>`
      SELECT secret_ciphertext, previous_secret_ciphertext FROM webhooks WHERE id = ${id}`;
    for (const sealed of [row!.secretCiphertext, row!.previousSecretCiphertext]) {
      assert.match(sealed, /^v1\./, "sealed as every secret is");
      assert.ok(!sealed.includes(OLD) && !sealed.includes(first.secret!));
    }
    const box = app.deps.secretBox;
    assert.equal(await box.open(row!.secretCiphertext, id), first.secret);
    assert.equal(await box.open(row!.previousSecretCiphertext, id), OLD);

    // A chosen secret is not echoed; rotating during the overlap keeps only the secret it replaces.
    clock.advance(1_000);
    const second = await rotateOk(app, user, id, { secret: "chosen-secret-0123456789", overlapSeconds: 60 });
    assert.deepEqual(Object.keys(second), ["previousSecretExpiresAt"]);
    assert.equal(second.previousSecretExpiresAt, new Date(clock.now().getTime() + 60_000).toISOString());
    const [after] = await h.db.sql<{ previousSecretCiphertext: string }[]>`
      SELECT previous_secret_ciphertext FROM webhooks WHERE id = ${id}`;
    assert.equal(await box.open(after!.previousSecretCiphertext, id), first.secret, "the oldest secret is gone");

    // No overlap asked: the replaced secret is not kept at all.
    const none = await rotateOk(app, user, id, { overlapSeconds: 0 });
    assert.equal(none.previousSecretExpiresAt, clock.now().toISOString());
    const [zero] = await h.db.sql`SELECT previous_secret_ciphertext, previous_secret_expires_at FROM webhooks
      WHERE id = ${id}`;
    assert.deepEqual([zero!.previousSecretCiphertext, zero!.previousSecretExpiresAt], [null, null]);

    // A webhook without a secret has nothing to overlap with.
    const unsigned = await createWebhook(app, user, h.receiver.url("/unsigned"));
    assert.equal((await rotateOk(app, user, unsigned)).previousSecretExpiresAt, null);

    // The minute sweep forgets a replaced secret once its overlap has ended, not before.
    await rotateOk(app, user, id, { overlapSeconds: 120 });
    clock.advance(119_000);
    await runSweeps(app.deps.sweeps, clock.now());
    const [kept] = await h.db.sql`SELECT previous_secret_ciphertext FROM webhooks WHERE id = ${id}`;
    assert.notEqual(kept!.previousSecretCiphertext, null);
    clock.advance(1_000);
    await runSweeps(app.deps.sweeps, clock.now());
    const [swept] = await h.db.sql`SELECT previous_secret_ciphertext, previous_secret_expires_at FROM webhooks
      WHERE id = ${id}`;
    assert.deepEqual([swept!.previousSecretCiphertext, swept!.previousSecretExpiresAt], [null, null]);
  } finally {
    await h.close();
  }
});

Deno.test("rotate-secret refuses what it cannot do: bad fields 400, another account's webhook 404, free plan 403, a form 415", async () => {
  const h = await startHarness({ receiver: true, user: "pro" });
  try {
    const { app, user } = h;
    const id = await createWebhook(app, user, h.receiver.url("/r"), ["inbox.created"], OLD);
    for (
      const json of [
        { overlapSeconds: -1 },
        { overlapSeconds: 604_801 },
        { overlapSeconds: 1.5 },
        { overlapSeconds: "60" },
        { secret: "too-short" },
        { secret: "x".repeat(257) },
        { secret: null },
        { other: true },
      ]
    ) {
      await expectError(await rotate(app, user, id, json), 400, "VALIDATION_ERROR");
    }
    assert.equal((await rotateOk(app, user, id, { overlapSeconds: 604_800 })).previousSecretExpiresAt !== null, true);
    const other = await newUser(app, "pro");
    await expectError(await rotate(app, other, id, {}), 404, "WEBHOOK_NOT_FOUND");
    await expectError(await rotate(app, user, "wh_missing", {}), 404, "WEBHOOK_NOT_FOUND");
    const form = await app.request(`/api/user-webhooks/${id}/rotate-secret`, {
      method: "POST",
      body: "secret=x",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      cookie: user.cookie,
    });
    await expectError(form, 415, "UNSUPPORTED_MEDIA_TYPE");
    await setPlan(app, user.id, "free");
    await expectError(await rotate(app, user, id, {}), 403, "PLAN_REQUIRED");
  } finally {
    await h.close();
  }
});

Deno.test("during the overlap deliveries and test events verify with either secret; after it only with the new one", async () => {
  // The wall clock: standardwebhooks checks webhook-timestamp against the real time.
  const h = await startHarness({ receiver: true, user: "pro", systemClock: true });
  try {
    const { app, user, receiver } = h;
    const id = await createWebhook(app, user, receiver.url("/overlap"), ["inbox.created"], OLD);
    const { secret, previousSecretExpiresAt } = await rotateOk(app, user, id, { overlapSeconds: 2 });
    const NEW = secret!;

    /** One real delivery (an event through the queue) and one test event; the two requests. */
    const send = async (): Promise<ReceivedRequest[]> => {
      const before = receiver.requests.length;
      const now = new Date();
      await app.deps.outbox.transaction((_tx, emit) =>
        emit(user.id, "inbox.created", {
          inboxId: "inb_rot",
          address: "rot@inbox.localhost",
          expiresAt: now.toISOString(),
        }, now)
      );
      await app.deps.deliveries.queue.drain();
      const test = await app.request(`/api/user-webhooks/${id}/test`, { method: "POST", cookie: user.cookie });
      assert.equal((await body(test)).success, true);
      return (await receiver.waitFor(before + 2)).slice(before);
    };

    const during = await send();
    assert.deepEqual(during.map((r) => r.headers["x-webhook-event"]), ["inbox.created", "test"]);
    for (const req of during) {
      const signatures = standardSignatures(req);
      assert.equal(signatures.length, 2, "one signature per live secret");
      assert.ok(signatures.every((s) => s.startsWith("v1,")));
      // Newest first: the first signature alone verifies with the new secret.
      const first = { ...req, headers: { ...req.headers, "webhook-signature": signatures[0]! } };
      assert.ok(standardAccepts(first, NEW), "the new secret's signature comes first");
      assert.ok(standardAccepts(req, NEW), "standardwebhooks with the new secret alone");
      assert.ok(standardAccepts(req, OLD_KEY), "standardwebhooks with the old secret alone");
      assert.ok(!standardAccepts(req, standardWebhooksKeyOf({ secret: "an-unrelated-secret-0123", decoded: false })));
      const signature = req.headers["x-webhook-signature"]!;
      assert.equal(await octokitVerify(NEW, req.body, signature), true, "X-Webhook-Signature: the newest secret");
      assert.equal(await octokitVerify(OLD, req.body, signature), false);
    }

    await sleep(Math.max(0, Date.parse(previousSecretExpiresAt!) - Date.now()) + 50);
    const after = await send();
    for (const req of after) {
      assert.equal(standardSignatures(req).length, 1, "the old secret no longer signs");
      assert.ok(standardAccepts(req, NEW));
      assert.ok(!standardAccepts(req, OLD_KEY), "the old secret no longer verifies");
      assert.equal(await octokitVerify(NEW, req.body, req.headers["x-webhook-signature"]!), true);
    }
  } finally {
    await h.close();
  }
});

Deno.test("a PATCH of the secret during an overlap ends it; a second rotation keeps only the secret it replaced", async () => {
  const h = await startHarness({ receiver: true, user: "pro", systemClock: true });
  try {
    const { app, user, receiver } = h;
    const id = await createWebhook(app, user, receiver.url("/patch"), ["inbox.created"], OLD);
    const test = async (): Promise<ReceivedRequest> => {
      const before = receiver.requests.length;
      const res = await app.request(`/api/user-webhooks/${id}/test`, { method: "POST", cookie: user.cookie });
      assert.equal((await body(res)).success, true);
      return (await receiver.waitFor(before + 1))[before]!;
    };
    const patch = async (secret: string | null) => {
      const res = await app.request(`/api/user-webhooks/${id}`, {
        method: "PATCH",
        json: { secret },
        cookie: user.cookie,
      });
      assert.equal(res.status, 200);
      await res.body?.cancel();
    };

    const one = (await rotateOk(app, user, id)).secret!;
    const two = (await rotateOk(app, user, id)).secret!;
    const twice = await test();
    assert.equal(standardSignatures(twice).length, 2);
    assert.ok(standardAccepts(twice, two) && standardAccepts(twice, one), "the newest and the one it replaced");
    assert.ok(!standardAccepts(twice, OLD_KEY), "not the secret the first rotation replaced");

    const patched = "patched-secret-0123456789";
    await patch(patched);
    const replaced = await test();
    assert.equal(standardSignatures(replaced).length, 1, "a PATCH replaces at once: no overlap");
    assert.ok(standardAccepts(replaced, standardWebhooksKeyOf({ secret: patched, decoded: false })));
    assert.ok(!standardAccepts(replaced, two));
    assert.equal(await octokitVerify(patched, replaced.body, replaced.headers["x-webhook-signature"]!), true);

    await rotateOk(app, user, id);
    await patch(null);
    const unsigned = await test();
    assert.equal(unsigned.headers["webhook-signature"], undefined, "no secret, no signature, the overlap ended too");
    assert.equal(unsigned.headers["x-webhook-signature"], undefined);
  } finally {
    await h.close();
  }
});
