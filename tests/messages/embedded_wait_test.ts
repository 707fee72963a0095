/**
 * The CI email loop on the embedded database, as a new user runs it
 * (`deno task start` with no DATABASE_URL): mail over SMTP wakes a waiting
 * request (no LISTEN there: the storing instance wakes its own waiters), and
 * the message carries its code and its raw form.
 */
import assert from "node:assert/strict";
import { apiAt, sessionCookieOf } from "../_helpers/app.ts";
import { body } from "../_helpers/expect.ts";
import { startService } from "../_helpers/process.ts";
import { sendMail, waitRequest } from "./_support.ts";

Deno.test("embedded database: a message over SMTP answers a waiting request, with its code and raw form", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "inbox-wait-" });
  const service = await startService({ DATA_DIR: dataDir });
  try {
    const api = apiAt(service.url);
    const registered = await api.request("/api/auth/register", {
      method: "POST",
      json: { email: "ci@example.com", password: "password123" },
    });
    assert.equal(registered.status, 201);
    const user = { id: (await registered.json()).id, email: "ci@example.com", cookie: sessionCookieOf(registered) };
    const inbox = await body(await api.request("/api/inboxes", { method: "POST", json: {}, cookie: user.cookie }));
    const pending = waitRequest(api, user, inbox.id as string, { timeoutMs: "30000", subject: "verify" });
    await new Promise((r) => setTimeout(r, 200));
    const sent = performance.now();
    await sendMail(service.smtpPort, {
      to: inbox.address as string,
      subject: "Please verify",
      text: "Your code: 318 442",
    });
    const res = await pending;
    assert.ok(performance.now() - sent < 15_000, "woken by the message, not by the end of the hold (30 s)");
    assert.equal(res.status, 200);
    const message = await body(res);
    assert.deepEqual(message.codes, ["318442"]);
    const raw = await api.request(`/api/inboxes/${inbox.id}/messages/${message.id}/raw`, { cookie: user.cookie });
    assert.equal(raw.status, 200);
    assert.match(await raw.text(), /^Subject: Please verify\r$/m);
  } finally {
    await service.stop();
    await Deno.remove(dataDir, { recursive: true });
  }
});
