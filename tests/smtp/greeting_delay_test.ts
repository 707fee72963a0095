/**
 * SMTP_GREETING_DELAY_MS: smtp-server pauses 100 ms before every greeting to
 * catch clients that talk first; here the pause is a setting, 0 by default.
 * A client that sends EHLO before the greeting is greeted and served at 0,
 * and refused ("421 ... You talk too soon") with a pause.
 */
import assert from "node:assert/strict";
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
