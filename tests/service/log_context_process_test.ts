/**
 * Log contexts on the real service process, over real HTTP and SMTP: a
 * request's lines carry its own request id and nothing of the SMTP sessions
 * served before it. Deno's HTTP server calls a request's handler from the
 * runtime in whatever async context the JavaScript that ran just before left
 * behind; until src/http/serve.ts started every request outside any context,
 * every access line after the first mail carried that mail's `smtpSession`.
 */
import assert from "node:assert/strict";
import { apiAt, newUser } from "../_helpers/app.ts";
import { createTestDb } from "../_helpers/db.ts";
import { serviceEnv, startService } from "../_helpers/process.ts";
import { sendMail } from "../messages/_support.ts";

Deno.test("after mail over SMTP, a request's access line carries its own request id and no SMTP session", async () => {
  const db = await createTestDb();
  try {
    // The helper chooses both ports, and tries others should one be taken before the service binds it.
    const service = await startService(serviceEnv(db, { LOG_LEVEL: "info", LOG_FORMAT: "json" }), { stdout: true });
    const probes: string[] = [];
    try {
      const api = apiAt(service.url);
      const user = await newUser(api);
      const created = await api.request("/api/inboxes", { method: "POST", json: {}, cookie: user.cookie });
      assert.equal(created.status, 201);
      const inbox = await created.json();
      for (let i = 0; i < 3; i++) {
        await sendMail(service.smtpPort, { to: inbox.address, subject: `context ${i}`, text: "hello" });
        const probe = `after-mail-${i}`;
        probes.push(probe);
        const res = await api.request(`/api/inboxes/${inbox.id}/messages`, {
          cookie: user.cookie,
          headers: { "x-request-id": probe },
        });
        assert.equal(res.status, 200);
        await res.body?.cancel();
      }
    } finally {
      assert.equal(await service.stop(), 0);
    }
    const records = (await service.stdout()).split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
    const access = records.filter((r) => r.logger === "inbox.http");
    for (const probe of probes) {
      const line = access.find((r) => r.properties?.requestId === probe);
      assert.ok(line, `the access line of ${probe}`);
      assert.equal(line.properties.smtpSession, undefined, JSON.stringify(line));
    }
    const tainted = access.filter((r) => r.properties?.smtpSession !== undefined);
    assert.deepEqual(tainted, [], "no access line carries an SMTP session");
  } finally {
    await db.close();
  }
});
