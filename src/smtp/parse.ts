/**
 * Raw RFC 5322 bytes -> what is stored of a message. Tolerant by design: a
 * message the MIME parser cannot make sense of is stored as best it can be
 * (raw text as the body), never refused for its form.
 */
import libmimeModule from "libmime";
import { type HeaderLines, simpleParser } from "mailparser";
import { Buffer } from "node:buffer";
import type { IncomingMessage } from "../messages/receive.ts";

/** PostgreSQL text and jsonb cannot hold U+0000, which malformed mail may contain. */
function clean(text: string): string {
  return text.includes("\u0000") ? text.replaceAll("\u0000", "") : text;
}

/** libmime ships no types; the one method used here, typed once. */
const libmime: { decodeWords(value: string): string } = libmimeModule;

/** Unfolded header value (RFC 5322 2.2.3) with RFC 2047 encoded words decoded. */
function headerValue(line: string): string {
  const colon = line.indexOf(":");
  const unfolded = (colon < 0 ? "" : line.slice(colon + 1)).replace(/\r?\n[ \t]+/g, " ").trim();
  try {
    return libmime.decodeWords(unfolded);
  } catch {
    return unfolded; // Tolerant: a value that cannot be decoded is kept as sent.
  }
}

/**
 * Headers as an object of lowercase name -> value (unfolded, encoded words
 * decoded); a repeated header's values joined with ", ".
 */
export function headersObject(lines: HeaderLines): Record<string, string> {
  const values = new Map<string, string[]>();
  for (const { key, line } of lines) {
    const name = clean(key.toLowerCase());
    if (name === "") continue; // A line without a colon is no header.
    const list = values.get(name) ?? [];
    list.push(clean(headerValue(line)));
    values.set(name, list);
  }
  // Object.fromEntries defines own properties, so even a `__proto__` header is plain data.
  return Object.fromEntries([...values].map(([name, list]) => [name, list.join(", ")]));
}

/** Parses a raw message; `envelopeFrom` (MAIL FROM) stands in when there is no From header. */
export async function parseMessage(raw: Uint8Array, envelopeFrom: string): Promise<IncomingMessage> {
  try {
    const mail = await simpleParser(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength), {
      // Store what the sender sent: no text derived from HTML, no HTML from
      // text, and cid: images left as links (their bytes are not kept).
      skipHtmlToText: true,
      skipTextToHtml: true,
      skipImageLinks: true,
      skipTextLinks: true,
    });
    return {
      from: clean(mail.from?.text || envelopeFrom),
      subject: clean(mail.subject ?? ""),
      // With HTML-to-text off, an HTML-only message still gets text "": that is no text part.
      text: mail.text === undefined || (mail.text === "" && mail.html !== false) ? null : clean(mail.text),
      html: typeof mail.html === "string" ? clean(mail.html) : null,
      headers: headersObject(mail.headerLines),
      attachments: mail.attachments.map((a) => ({
        filename: a.filename === undefined ? null : clean(a.filename),
        contentType: clean(a.contentType),
        content: new Uint8Array(a.content.buffer, a.content.byteOffset, a.content.byteLength),
      })),
      raw,
    };
  } catch {
    // The parser gave up: keep the bytes as text so the user still sees what came.
    return {
      from: clean(envelopeFrom),
      subject: "",
      text: clean(new TextDecoder().decode(raw)),
      html: null,
      headers: {},
      attachments: [],
      raw,
    };
  }
}
