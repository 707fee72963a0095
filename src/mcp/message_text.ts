/**
 * Messages as the MCP tools give them to a model: the fields an agent acts on
 * (sender, subject, body text, codes, links, attachment names and sizes),
 * without the raw HTML (their zod schemas are the tools' output schemas),
 * and a plain-text rendering of them. Every string
 * here that comes from the mail is the sender's; the renderings are wrapped
 * by their caller (untrusted.ts), never here, so that a tool's text holds
 * one wrapper.
 *
 * @module
 */
import { z } from "zod";
import type { Message, MessageSummary } from "../client/mod.ts";
import { walkHtml } from "../messages/extract/html_text.ts";

/** Body text beyond this many characters is cut: a model's context is finite, and the raw message stays available. */
export const MAX_BODY_CHARS = 100_000;

/** Where a message's body text came from. */
export type BodySource = MessageView["textSource"];

/** A message of a list as the tools return it. */
export const MessageSummarySchema = z.object({
  id: z.string(),
  inboxId: z.string(),
  from: z.string(),
  to: z.string(),
  subject: z.string(),
  receivedAt: z.string(),
  size: z.number(),
});

/** A message as the tools return it. */
export const MessageViewSchema = MessageSummarySchema.extend({
  text: z.string().describe("The text part; the visible text of the HTML part when there is no text part."),
  textSource: z.enum(["text", "html", "none"]),
  textTruncated: z.boolean().describe(`Whether \`text\` was cut at ${MAX_BODY_CHARS} characters.`),
  codes: z.array(z.string()).describe("One-time codes found in the subject and body, in order of appearance."),
  links: z.array(z.object({ url: z.string(), text: z.string().nullable() })),
  attachments: z.array(z.object({
    id: z.string(),
    filename: z.string().nullable(),
    contentType: z.string(),
    size: z.number(),
  })),
});

export type MessageView = z.output<typeof MessageViewSchema>;

/** The body a reader sees: the text part, else the visible text of the HTML (hidden preheaders, styles and scripts left out). */
export function bodyText(message: Pick<Message, "text" | "html">): { text: string; source: BodySource } {
  if (message.text !== null && message.text.trim() !== "") return { text: message.text, source: "text" };
  if (message.html !== null && message.html.trim() !== "") {
    return { text: walkHtml(message.html).lines.map((line) => line.text).join("\n"), source: "html" };
  }
  return { text: "", source: "none" };
}

/** The tools' view of a message from the API. */
export function toMessageView(message: Message): MessageView {
  const body = bodyText(message);
  const truncated = body.text.length > MAX_BODY_CHARS;
  return {
    id: message.id,
    inboxId: message.inboxId,
    from: message.from,
    to: message.to,
    subject: message.subject,
    receivedAt: message.receivedAt,
    size: message.size,
    text: truncated ? body.text.slice(0, MAX_BODY_CHARS) : body.text,
    textSource: body.source,
    textTruncated: truncated,
    codes: message.codes,
    links: message.links.map((link) => ({ url: link.url, text: link.text })),
    attachments: message.attachments.map((a) => ({
      id: a.id,
      filename: a.filename,
      contentType: a.contentType,
      size: a.size,
    })),
  };
}

/** A byte count as a person reads it. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/** A message as text: headers, codes, links, attachments, then the body. */
export function renderMessage(view: MessageView): string {
  const lines = [
    `Message: ${view.id} (inbox ${view.inboxId})`,
    `Received: ${view.receivedAt}`,
    `From: ${view.from}`,
    `To: ${view.to}`,
    `Subject: ${view.subject}`,
    `Codes: ${view.codes.length > 0 ? view.codes.join(", ") : "none found"}`,
  ];
  if (view.links.length > 0) {
    lines.push("Links:");
    for (const link of view.links) lines.push(`- ${link.text ? `${link.text}: ` : ""}${link.url}`);
  } else {
    lines.push("Links: none");
  }
  if (view.attachments.length > 0) {
    lines.push("Attachments:");
    for (const a of view.attachments) {
      lines.push(`- ${a.filename ?? "(no name)"} (${a.contentType}, ${formatBytes(a.size)}, id ${a.id})`);
    }
  } else {
    lines.push("Attachments: none");
  }
  const source = view.textSource === "html" ? " (visible text of the HTML part)" : "";
  lines.push("", `Body${source}:`, view.textSource === "none" ? "(empty)" : view.text);
  if (view.textTruncated) lines.push(`[body cut at ${MAX_BODY_CHARS} characters]`);
  return lines.join("\n");
}

/** One line per message of a list. */
export function renderSummaries(messages: MessageSummary[]): string {
  return messages.map((m) =>
    `- ${m.id} | ${m.receivedAt} | From: ${m.from} | To: ${m.to} | Subject: ${m.subject} | ${formatBytes(m.size)}`
  ).join("\n");
}
