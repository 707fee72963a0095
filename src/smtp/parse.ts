/**
 * Raw RFC 5322 bytes -> what is stored of a message. Tolerant by design: a
 * message the MIME parser cannot make sense of is stored as best it can be
 * (raw text as the body), never refused for its form.
 */
import { type HeaderLines, simpleParser } from "mailparser";
import { Buffer } from "node:buffer";
import type { IncomingMessage } from "../inboxes/service.ts";

/** PostgreSQL text and jsonb cannot hold U+0000, which malformed mail may contain. */
function clean(text: string): string {
  return text.includes("\u0000") ? text.replaceAll("\u0000", "") : text;
}

/** Unfolded header value (RFC 5322 2.2.3) with RFC 2047 encoded words decoded. */
function headerValue(line: string): string {
  const colon = line.indexOf(":");
  const unfolded = (colon < 0 ? "" : line.slice(colon + 1)).replace(/\r?\n[ \t]+/g, " ").trim();
  return decodeEncodedWords(unfolded);
}

const ENCODED_WORD = /=\?([^?\s]+)\?([bBqQ])\?([^?\s]*)\?=/g;

/** Decodes `=?charset?B|Q?...?=` words; a word in an unknown charset or encoding stays as it is. */
export function decodeEncodedWords(value: string): string {
  // Whitespace between two adjacent encoded words is not part of the text (RFC 2047 6.2).
  const joined = value.replace(/(\?=)\s+(?==\?[^?\s]+\?[bBqQ]\?)/g, "$1");
  return joined.replace(ENCODED_WORD, (word, charset: string, encoding: string, text: string) => {
    try {
      const bytes = encoding.toUpperCase() === "B" ? Uint8Array.from(atob(text), (c) => c.charCodeAt(0)) : qBytes(text);
      // RFC 2231 allows a language after '*': "utf-8*en".
      return new TextDecoder(charset.split("*")[0]!, { fatal: false }).decode(bytes);
    } catch {
      return word;
    }
  });
}

function qBytes(text: string): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "_") out.push(0x20);
    else if (c === "=" && /^[0-9A-Fa-f]{2}$/.test(text.slice(i + 1, i + 3))) {
      out.push(parseInt(text.slice(i + 1, i + 3), 16));
      i += 2;
    } else out.push(c.charCodeAt(0) & 0xff);
  }
  return new Uint8Array(out);
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
  const size = raw.byteLength;
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
        size: a.size,
      })),
      size,
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
      size,
    };
  }
}
