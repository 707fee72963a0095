/**
 * `since` on the list and the wait, over real HTTP and real PostgreSQL: an
 * instant the database cannot hold as the API sends it (UTC year 0 or below,
 * 10000 or above, reached through the offset too) is a 400 VALIDATION_ERROR
 * naming `since`, never a 500 from the query; the first and last instants it
 * holds are accepted and filter as any other.
 */
import assert from "node:assert/strict";
import { newUser } from "../_helpers/app.ts";
import { body, expectError } from "../_helpers/expect.ts";
import { createInbox, withInboxes } from "../inboxes/_support.ts";
import { sendMail, waitRequest } from "./_support.ts";

/** Outside 0001..9999 once in UTC: year 0, and one day past either end through the offset. */
const OUT_OF_RANGE = [
  "0000-01-01T00:00:00Z",
  "9999-12-31T23:59:59.999-23:59",
  "0000-01-01T00:00:00+23:59",
  "0001-01-01T00:00:00+00:01",
  "9999-12-31T23:59:59.999-00:01",
];

Deno.test("since outside the years 0001..9999 (UTC) is 400 VALIDATION_ERROR on the list and the wait; the bounds are accepted", async () => {
  await withInboxes(async ({ app, smtp }) => {
    const user = await newUser(app, "free");
    const inbox = await createInbox(app, user);
    await sendMail(smtp.port, { to: inbox.address, subject: "kept", text: "x" });
    const list = (since: string) =>
      app.request(`/api/inboxes/${inbox.id}/messages?since=${encodeURIComponent(since)}`, { cookie: user.cookie });
    const wait = (since: string) => waitRequest(app, user, inbox.id, { timeoutMs: "0", since });

    for (const since of OUT_OF_RANGE) {
      for (const [name, send] of [["list", list], ["wait", wait]] as const) {
        const res = await send(since);
        const error = await expectError(res, 400, "VALIDATION_ERROR");
        assert.equal(error.details?.[0]?.path, "since", `${name} ${since}: ${JSON.stringify(error)}`);
        assert.match(error.details[0]!.message, /0001-01-01T00:00:00Z.*9999-12-31T23:59:59\.999Z/, `${name} ${since}`);
      }
    }

    // The first and last instants the database holds, and the offsets that stay inside them.
    for (const since of ["0001-01-01T00:00:00Z", "0001-01-01T00:00:00-23:59"]) {
      const listed = await list(since);
      assert.equal(listed.status, 200, since);
      assert.deepEqual(((await body(listed)).data as { subject: string }[]).map((m) => m.subject), ["kept"], since);
      const waited = await wait(since);
      assert.equal(waited.status, 200, since);
      assert.equal((await body(waited)).subject, "kept", since);
    }
    for (const since of ["9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999+23:59"]) {
      const listed = await list(since);
      assert.equal(listed.status, 200, since);
      assert.deepEqual((await body(listed)).data, [], since);
      const waited = await wait(since);
      assert.equal(waited.status, 204, since);
      await waited.body?.cancel();
    }

    // Not a timestamp at all: the format's own message, on the same path.
    const error = await expectError(await list("2026-01-01"), 400, "VALIDATION_ERROR");
    assert.equal(error.details?.[0]?.path, "since");
  });
});
