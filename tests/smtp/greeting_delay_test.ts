/**
 * SMTP_GREETING_DELAY_MS: smtp-server pauses 100 ms before every greeting to
 * catch clients that talk first; here the pause is a setting, 0 by default.
 * A client that sends EHLO before the greeting is greeted and served at 0,
 * and refused ("421 ... You talk too soon") with a pause.
 */
import assert from "node:assert/strict";
import { SMTPConnection } from "smtp-server/lib/smtp-connection.js";
import { replacedInit } from "../../src/smtp/greeting_delay.ts";
import { withService } from "../_helpers/harness.ts";

/** Connects, sends EHLO at once (before any greeting), and returns what the server said until it went quiet or closed. */
async function talkFirst(port: number): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(new TextEncoder().encode("EHLO early.test\r\n"));
    let text = "";
    const buf = new Uint8Array(4096);
    // Read until the EHLO's reply (250 without a continuation) or a 421, or the server closes.
    while (!/^(250 |421 )/m.test(text)) {
      const n = await conn.read(buf);
      if (n === null) break;
      text += new TextDecoder().decode(buf.subarray(0, n));
    }
    return text;
  } finally {
    conn.close();
  }
}

Deno.test("by default the greeting comes at once: a client that talks first is greeted and served", async () => {
  await withService({ smtp: true }, async ({ smtp, app }) => {
    assert.equal(app.deps.config.smtpGreetingDelayMs, 0);
    const said = await talkFirst(smtp.port);
    assert.match(said, /^220 /m, said);
    assert.match(said, /^250 /m, said);
    assert.doesNotMatch(said, /too soon/);
  });
});

Deno.test("with SMTP_GREETING_DELAY_MS, a client that talks before the greeting is refused with 421", async () => {
  await withService({ smtp: true, env: { SMTP_GREETING_DELAY_MS: "500" } }, async ({ smtp }) => {
    const said = await talkFirst(smtp.port);
    assert.match(said, /^421 .*too soon/m, said);
  });
});

/**
 * smtp-server 3.21.6's `SMTPConnection.prototype.init`, which greeting_delay.ts
 * replaces with a copy of the same steps (whitespace aside).
 */
const UPSTREAM_INIT = `init() {
  // Setup event handlers for the socket
  this._setListeners(() => {
    // Check that connection limit is not exceeded
    if (this._server.options.maxClients && this._server.connections.size > this._server.options.maxClients) {
      return this.send(421, this.name + ' Too many connected clients, try again in a moment', false);
    }
    // Keep a small delay for detecting early talkers
    let readyTimer = setTimeout(() => this.connectionReady(), 100);
    // Unref timer so connection init delay doesn't prevent process exit
    readyTimer.unref();
  });
}`;

Deno.test("smtp-server's own init is still the one greeting_delay.ts copies (else: compare, then update both)", () => {
  const squeeze = (source: string) => source.replace(/\s+/g, " ").trim();
  assert.equal(
    squeeze(replacedInit.toString()),
    squeeze(UPSTREAM_INIT),
    "smtp-server's SMTPConnection.prototype.init changed: bring its new steps into src/smtp/greeting_delay.ts " +
      "(or drop the replacement if smtp-server now has an option for the delay), then update this copy and " +
      "docs/workarounds.md",
  );
  // What the copy calls on a connection.
  const proto = SMTPConnection.prototype as unknown as Record<string, unknown>;
  for (const method of ["_setListeners", "send", "connectionReady"]) {
    assert.equal(typeof proto[method], "function", `SMTPConnection.prototype.${method}`);
  }
});
