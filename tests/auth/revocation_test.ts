/**
 * Revocation and logout reach what is open: within a second of revoking an
 * API key or ending a session, every event stream opened with it ends and
 * every pending wait opened with it answers 401 UNAUTHORIZED, on the instance
 * that revoked it and on another one (NOTIFY through the hub); nothing that
 * arrives after the revocation is sent on them. Streams and waits of other
 * credentials of the same account go on.
 */
import assert from "node:assert/strict";
import { newApiKey, newUser, type TestApp, type User } from "../_helpers/app.ts";
import { withService } from "../_helpers/harness.ts";
import { openSse, type SseStream } from "../_helpers/sse.ts";
import { waitUntil } from "../_helpers/wait.ts";
import { createInbox } from "../inboxes/_support.ts";
import { sendMail, waitersGauge } from "../messages/_support.ts";
import { AUTH_CHANNEL } from "../../src/auth/revocations.ts";

/** The time the contract gives a revocation to reach what is open. */
const WITHIN_MS = 1_000;

function streamWith(app: TestApp, auth: { key?: string; cookie?: string }): Promise<SseStream> {
  return openSse(`${app.baseUrl}/api/events/stream`, {
    ...(auth.key ? { authorization: `Bearer ${auth.key}` } : {}),
    ...(auth.cookie ? { cookie: auth.cookie } : {}),
  });
}

function waitWith(app: TestApp, inboxId: string, auth: { key?: string; cookie?: string }): Promise<Response> {
  return fetch(`${app.baseUrl}/api/inboxes/${inboxId}/messages/wait?timeoutMs=30000`, {
    headers: {
      ...(auth.key ? { authorization: `Bearer ${auth.key}` } : {}),
      ...(auth.cookie ? { cookie: auth.cookie } : {}),
    },
  });
}

/** Resolves with how long `p` took to settle after `from`, or rejects after `ms`. */
async function settlesWithin<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => timer = setTimeout(() => reject(new Error(`${what} after ${ms} ms`)), ms)),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Logs in again as `user`: a second session of the same account. */
async function secondSession(app: TestApp, user: User): Promise<string> {
  const res = await app.request("/api/auth/login", {
    method: "POST",
    json: { email: user.email, password: "correct horse" },
  });
  assert.equal(res.status, 200);
  return res.headers.getSetCookie().find((c) => c.startsWith("session="))!.split(";")[0]!;
}

for (const where of ["the same instance", "another instance"] as const) {
  Deno.test(`revoking a key ends its streams and answers its waits 401 within 1 s, on ${where}`, async () => {
    await withService({ smtp: true, systemClock: true, listen: true }, async ({ app, smtp, startInstance }) => {
      const other = where === "the same instance" ? app : await startInstance({ listen: true });
      const user = await newUser(app, "pro");
      const revoked = await newApiKey(app, user, "revoked");
      const kept = await newApiKey(app, user, "kept");
      const inbox = await createInbox(app, user);

      const revokedStream = await streamWith(other, { key: revoked.key });
      const keptStream = await streamWith(other, { key: kept.key });
      const revokedWait = waitWith(other, inbox.id, { key: revoked.key });
      await waitUntil(async () => await waitersGauge(other) === 1, 5_000, () => "the wait never started");

      const res = await app.request(`/api/api-keys/${revoked.id}`, { method: "DELETE", cookie: user.cookie });
      assert.equal(res.status, 200);
      const answered = await settlesWithin(revokedWait, WITHIN_MS, "the wait did not answer");
      assert.equal(answered.status, 401);
      assert.equal((await answered.json()).code, "UNAUTHORIZED");
      await settlesWithin(revokedStream.ended, WITHIN_MS, "the stream did not end");

      // What happens after the revocation reaches the other credential's stream only.
      await createInbox(app, user);
      await sendMail(smtp.port, { to: inbox.address, subject: "after", text: "Your code is 482913" });
      await keptStream.waitForFrames(2);
      assert.deepEqual(keptStream.frames().map((f) => f.event), ["inbox.created", "message.received"]);
      assert.deepEqual(revokedStream.frames(), [], "nothing after the revocation");
      keptStream.close();
    });
  });

  Deno.test(`logging out ends the session's streams and answers its waits 401 within 1 s, on ${where}`, async () => {
    await withService({ smtp: true, systemClock: true, listen: true }, async ({ app, smtp, startInstance }) => {
      const other = where === "the same instance" ? app : await startInstance({ listen: true });
      const user = await newUser(app, "free");
      const kept = await secondSession(app, user);
      const inbox = await createInbox(app, user);

      const endedStream = await streamWith(other, { cookie: user.cookie });
      const keptStream = await streamWith(other, { cookie: kept });
      const endedWait = waitWith(other, inbox.id, { cookie: user.cookie });
      await waitUntil(async () => await waitersGauge(other) === 1, 5_000, () => "the wait never started");

      const res = await app.request("/api/auth/logout", { method: "POST", cookie: user.cookie });
      assert.equal(res.status, 200);
      const answered = await settlesWithin(endedWait, WITHIN_MS, "the wait did not answer");
      assert.equal(answered.status, 401);
      await answered.body?.cancel();
      await settlesWithin(endedStream.ended, WITHIN_MS, "the stream did not end");

      await sendMail(smtp.port, { to: inbox.address, subject: "after", text: "Your code is 482913" });
      await keptStream.waitForFrames(1);
      assert.deepEqual(keptStream.frames().map((f) => f.event), ["message.received"]);
      assert.deepEqual(endedStream.frames(), [], "nothing after the logout");
      keptStream.close();
    });
  });
}

Deno.test("a stream opened with a session ends when the session expires", async () => {
  await withService({ systemClock: true, env: {} }, async ({ app }) => {
    const user = await newUser(app, "free");
    // The session's expiry moved to a moment from now, as if it had been opened 30 days ago.
    const expiresAt = new Date(Date.now() + 300);
    await app.deps.sql`UPDATE sessions SET expires_at = ${expiresAt} WHERE account_id = ${user.id}`;
    const stream = await streamWith(app, { cookie: user.cookie });
    await settlesWithin(stream.ended, 300 + WITHIN_MS, "the stream outlived its session");
    const after = await app.request("/api/events/stream", { cookie: user.cookie });
    assert.equal(after.status, 401);
    await after.body?.cancel();
  });
});

Deno.test("after the listening connection is lost, open requests of credentials revoked meanwhile end", async () => {
  await withService({ systemClock: true, listen: true }, async ({ app, db }) => {
    const user = await newUser(app, "pro");
    const key = await newApiKey(app, user);
    const stream = await streamWith(app, { key: key.key });
    // Deleted behind the service's back: no NOTIFY, as when one is lost while the connection is down.
    await db.sql`DELETE FROM api_keys WHERE id = ${key.id}`;
    // Every instance listening on the channel loses its connection (any other reconnects and re-checks too).
    const killed = await db.sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE query ILIKE ${`listen "${AUTH_CHANNEL}"%`} AND pid <> pg_backend_pid()`;
    assert.ok(killed.length >= 1, "the instance listens on the channel");
    // postgres.js reconnects and listens again; the hub asks every subscriber to re-check.
    await settlesWithin(stream.ended, 10_000, "the stream of a key revoked during the outage did not end");
  });
});
