/**
 * What get_message gives a model: the text part when there is one, else the
 * HTML's visible text (read by the extractor's walker, so hidden preheaders,
 * styles and scripts stay out), a body cut at a bound, and a rendering that
 * names codes, links and attachments.
 */
import assert from "node:assert/strict";
import type { Message } from "../../src/client/mod.ts";
import { bodyText, MAX_BODY_CHARS, renderMessage, toMessageView } from "../../src/mcp/message_text.ts";

function message(fields: Partial<Message>): Message {
  return {
    id: "msg_1",
    inboxId: "inb_1",
    from: "Sender <s@example.com>",
    to: "ci+run@inbox.localhost",
    subject: "Hello",
    receivedAt: "2026-01-01T00:00:00.000Z",
    size: 1234,
    text: null,
    html: null,
    headers: {},
    attachments: [],
    codes: [],
    links: [],
    ...fields,
  };
}

Deno.test("the text part wins; the HTML's visible text stands in when there is none (or it is blank)", () => {
  assert.deepEqual(bodyText(message({ text: "plain", html: "<p>rich</p>" })), { text: "plain", source: "text" });
  const html = `<html><head><title>T</title><style>p{color:red}</style><script>alert(1)</script></head>
    <body><span style="display:none">preheader 111111</span><h1>Welcome</h1><p>Your code:
    <b>482913</b></p><!-- 999999 --><a href="https://x.example/a?b=1&amp;c=2">Verify</a></body></html>`;
  for (const text of [null, "  \n "]) {
    const got = bodyText(message({ text, html }));
    assert.equal(got.source, "html");
    assert.equal(got.text, "Welcome\nYour code: 482913\nVerify");
  }
  assert.deepEqual(bodyText(message({})), { text: "", source: "none" });
});

Deno.test("a body past the bound is cut and says so", () => {
  const view = toMessageView(message({ text: "x".repeat(MAX_BODY_CHARS + 10) }));
  assert.equal(view.text.length, MAX_BODY_CHARS);
  assert.equal(view.textTruncated, true);
  assert.match(renderMessage(view), new RegExp(`\\[body cut at ${MAX_BODY_CHARS} characters\\]$`));
  assert.equal(toMessageView(message({ text: "short" })).textTruncated, false);
});

Deno.test("the rendering names the sender, codes, links and attachments, then the body", () => {
  const view = toMessageView(message({
    text: "Use 482913.",
    codes: ["482913"],
    links: [{ url: "https://x.example/verify", text: "Verify" }, { url: "https://x.example/raw", text: null }],
    attachments: [
      { id: "att_1", filename: "invoice.pdf", contentType: "application/pdf", size: 2048 },
      { id: "att_2", filename: null, contentType: "image/png", size: 10 },
    ],
  }));
  assert.equal(
    renderMessage(view),
    [
      "Message: msg_1 (inbox inb_1)",
      "Received: 2026-01-01T00:00:00.000Z",
      "From: Sender <s@example.com>",
      "To: ci+run@inbox.localhost",
      "Subject: Hello",
      "Codes: 482913",
      "Links:",
      "- Verify: https://x.example/verify",
      "- https://x.example/raw",
      "Attachments:",
      "- invoice.pdf (application/pdf, 2.0 KiB, id att_1)",
      "- (no name) (image/png, 10 bytes, id att_2)",
      "",
      "Body:",
      "Use 482913.",
    ].join("\n"),
  );
  const empty = renderMessage(toMessageView(message({})));
  assert.match(empty, /Codes: none found\nLinks: none\nAttachments: none\n\nBody:\n\(empty\)$/);
});
