/**
 * Every SMTP refusal is logged at info with the session id, the client's
 * address, the command refused and the reply, over real TCP connections to
 * the real listener: an unknown recipient, a message too large (declared at
 * MAIL FROM, or sent), one connection over the per-address or the total limit.
 */
import assert from "node:assert/strict";
import type { LogRecord } from "@logtape/logtape";
import { capturedLogs } from "../_helpers/log_capture.ts";
import { newUser } from "../_helpers/app.ts";
import { createInbox, MAIL_DOMAIN, withInboxes } from "../inboxes/_support.ts";
import { SmtpConversation } from "./_smtp_client.ts";

/** The refusal lines logged since `from`. */
function refusals(from: number): LogRecord[] {
  return capturedLogs.slice(from).filter((r) =>
    r.category.join(".") === "inbox.smtp" && typeof r.properties.reply === "string"
  );
}

/** Reads the first reply of a new connection (a greeting or a refusal), then closes it. */
async function firstReply(port: number): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    const buf = new Uint8Array(512);
    const n = await conn.read(buf);
    return new TextDecoder().decode(buf.subarray(0, n ?? 0)).trim();
  } finally {
    conn.close();
  }
}

Deno.test("SMTP refusals are logged at info: unknown recipient, too large, connections per address", async () => {
  await withInboxes(async ({ app, smtp }) => {
    const user = await newUser(app, "free");
    const inbox = await createInbox(app, user);

    // An unknown recipient.
    let from = capturedLogs.length;
    const smtpA = await SmtpConversation.open(smtp.port);
    try {
      await smtpA.command("EHLO client.test");
      await smtpA.command("MAIL FROM:<sender@example.com>");
      const rcpt = await smtpA.command(`RCPT TO:<nobody@${MAIL_DOMAIN}>`);
      assert.equal(rcpt.code, 550);
      const [line] = refusals(from);
      assert.ok(line, "the refusal is logged");
      assert.equal(line.level, "info");
      assert.equal(line.properties.command, `RCPT TO:<nobody@${MAIL_DOMAIN}>`);
      assert.equal(line.properties.reply, "550 5.1.1 No such mailbox");
      assert.equal(line.properties.address, "127.0.0.1");
      assert.equal(typeof line.properties.smtpSession, "string");

      // A message over SMTP_MAX_BYTES, sent to a live inbox: refused after DATA.
      from = capturedLogs.length;
      assert.equal((await smtpA.command(`RCPT TO:<${inbox.address}>`)).code, 250);
      const data = await smtpA.data(`Subject: big\r\n\r\n${"x".repeat(3_000)}\r\n`);
      assert.equal(data.code, 552);
      const [big] = refusals(from);
      assert.ok(big, "the oversized message is logged");
      assert.match(String(big.properties.command), /^DATA \(\d+ bytes\)$/);
      assert.match(String(big.properties.reply), /^552 /);
      assert.equal(big.properties.smtpSession, line.properties.smtpSession, "the same session");

      // A size declared over the limit: smtp-server refuses it itself, at MAIL FROM.
      from = capturedLogs.length;
      await smtpA.command("RSET");
      const declared = await smtpA.command("MAIL FROM:<sender@example.com> SIZE=100000");
      assert.equal(declared.code, 552);
      const [size] = refusals(from);
      assert.equal(size?.properties.command, "MAIL FROM:<sender@example.com> SIZE=100000");
      assert.match(String(size?.properties.reply), /^552 /);

      // One connection more than SMTP_MAX_CONNECTIONS_PER_ADDRESS from this address.
      from = capturedLogs.length;
      assert.match(await firstReply(smtp.port), /^421 /);
      const [limit] = refusals(from);
      assert.ok(limit, "the refused connection is logged");
      assert.equal(limit.properties.address, "127.0.0.1");
      assert.equal(limit.properties.command, "(connection)");
      assert.match(String(limit.properties.reply), /^421 .*Too many connections from your address/);
    } finally {
      await smtpA.quit();
    }
  }, { env: { SMTP_MAX_BYTES: "2000", SMTP_MAX_CONNECTIONS_PER_ADDRESS: "1" } });
});

Deno.test("a connection over SMTP_MAX_CONNECTIONS is logged at info with its address", async () => {
  await withInboxes(async ({ smtp }) => {
    const held = await SmtpConversation.open(smtp.port);
    try {
      const from = capturedLogs.length;
      assert.match(await firstReply(smtp.port), /^421 .*Too many connected clients/);
      const [line] = refusals(from);
      assert.ok(line, "the refused connection is logged");
      assert.equal(line.level, "info");
      assert.equal(line.properties.address, "127.0.0.1");
      assert.match(String(line.properties.reply), /^421 /);
    } finally {
      await held.quit();
    }
  }, { env: { SMTP_MAX_CONNECTIONS: "1" } });
});
