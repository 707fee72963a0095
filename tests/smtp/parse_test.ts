/** What is kept of a raw message: bodies as sent, headers as one object, attachment metadata. */
import assert from "node:assert/strict";
import { parseMessage } from "../../src/smtp/parse.ts";

const enc = new TextEncoder();

Deno.test("headers: lowercase names, unfolded, decoded where possible, repeats joined with ', '", async () => {
  const raw = [
    "Received: from a.example by b.example;",
    "\tMon, 1 Jan 2026 00:00:00 +0000",
    "Received: from c.example by a.example; Mon, 1 Jan 2026 00:00:00 +0000",
    "X-Encoded: =?UTF-8?Q?caf=C3=A9?=",
    "From: =?UTF-8?B?w4l2ZQ==?= <eve@example.com>",
    "To: a@inbox.localhost, b@inbox.localhost",
    "Subject: =?UTF-8?Q?=E2=9C=93_done?=",
    "",
    "body",
  ].join("\r\n");
  const m = await parseMessage(enc.encode(raw), "envelope@example.com");
  assert.equal(m.subject, "✓ done");
  assert.equal(m.from, '"Éve" <eve@example.com>');
  assert.equal(m.text, "body");
  assert.equal(m.html, null);
  assert.deepEqual(m.raw, enc.encode(raw));
  assert.equal(
    m.headers["received"],
    "from a.example by b.example; Mon, 1 Jan 2026 00:00:00 +0000, " +
      "from c.example by a.example; Mon, 1 Jan 2026 00:00:00 +0000",
  );
  assert.equal(m.headers["x-encoded"], "café");
  assert.equal(m.headers["subject"], "✓ done");
  assert.equal(m.headers["to"], "a@inbox.localhost, b@inbox.localhost");
});

Deno.test("an HTML-only message has text null; bodies are not derived from each other", async () => {
  const raw = "Subject: h\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<p>Only <i>HTML</i></p>";
  const m = await parseMessage(enc.encode(raw), "");
  assert.equal(m.text, null);
  assert.equal(m.html, "<p>Only <i>HTML</i></p>");
  assert.equal(m.from, "", "no From header and a null sender");
});

Deno.test("arbitrary bytes still give something to store, without NUL characters", async () => {
  const raw = new Uint8Array([0, 1, 2, 0xff, 0xfe, 0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x41]);
  const m = await parseMessage(raw, "s@example.com");
  assert.equal(m.raw, raw);
  assert.equal(m.from, "s@example.com");
  assert.ok(!JSON.stringify(m).includes("\\u0000"));
});

Deno.test("encoded words: a character split across two words, other charsets, and words that are not encoded", async () => {
  const raw = [
    "X-Split: =?UTF-8?Q?caf=C3?= =?UTF-8?Q?=A9?=",
    "X-Latin: =?ISO-8859-1?Q?=E9t=E9?= and =?windows-1252?Q?=80?=",
    "X-Joined: =?UTF-8?B?4pyT?= =?UTF-8?B?IGRvbmU=?=",
    "X-Plain: not =?encoded at all",
    "X-Unknown-Encoding: =?UTF-8?X?abc?=",
    "Subject: s",
    "",
    "body",
  ].join("\r\n");
  const m = await parseMessage(enc.encode(raw), "envelope@example.com");
  assert.equal(m.headers["x-split"], "café");
  assert.equal(m.headers["x-latin"], "été and €");
  assert.equal(m.headers["x-joined"], "✓ done");
  assert.equal(m.headers["x-plain"], "not =?encoded at all");
  assert.equal(m.headers["x-unknown-encoding"], "=?UTF-8?X?abc?=");
});
