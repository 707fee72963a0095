/**
 * The event log and stream on the embedded database, as a new user runs the
 * service (`deno task start` with no DATABASE_URL): there is no LISTEN there,
 * so the committing instance wakes its own streams.
 */
import assert from "node:assert/strict";
import { apiAt, sessionCookieOf } from "../_helpers/app.ts";
import { body } from "../_helpers/expect.ts";
import { startService } from "../_helpers/process.ts";
import { openSse } from "../_helpers/sse.ts";

Deno.test("embedded database: events are listed and streamed as they are committed", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "inbox-events-" });
  const service = await startService({ DATA_DIR: dataDir });
  try {
    const api = apiAt(service.url);
    const registered = await api.request("/api/auth/register", {
      method: "POST",
      json: { email: "laptop@example.com", password: "password123" },
    });
    assert.equal(registered.status, 201);
    const cookie = sessionCookieOf(registered);
    const stream = await openSse(`${service.url}/api/events/stream`, { cookie });
    const started = performance.now();
    const inbox = await body(await api.request("/api/inboxes", { method: "POST", json: {}, cookie }));
    await stream.waitForFrames(1, 10_000);
    assert.ok(performance.now() - started < 5_000, "woken at once, not by the 15 s keep-alive");
    const [frame] = stream.frames();
    assert.equal(frame!.event, "inbox.created");
    assert.equal(JSON.parse(frame!.data).data.inboxId, inbox.id);
    const page = await body(await api.request("/api/events", { cookie }));
    assert.deepEqual((page.data as { id: string }[]).map((e) => e.id), [frame!.id]);
    // SIGTERM with the stream still open: the stream ends and the service exits cleanly, without waiting for it.
    assert.equal(await service.stop(), 0);
    await stream.ended;
  } finally {
    await service.stop().catch(() => {});
    await Deno.remove(dataDir, { recursive: true });
  }
});
