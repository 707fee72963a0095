/**
 * A received message's codes and links, found once and stored for every
 * recipient. Its own module: the SMTP listener loads it with the MIME parser
 * on the first message, not at start (the HTML walk's htmlparser2 and its
 * dependencies are only needed once mail arrives).
 */
import { extractCodes, extractLinks } from "./extract/mod.ts";
import type { IncomingMessage, PreparedMessage } from "./receive.ts";

/** Finds the codes and links of a message (pure: no I/O, done before any transaction). */
export function prepareMessage(message: IncomingMessage): PreparedMessage {
  const mail = { subject: message.subject, text: message.text, html: message.html };
  return { ...message, codes: extractCodes(mail), links: extractLinks(mail) };
}
