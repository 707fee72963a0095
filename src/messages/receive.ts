/**
 * Mail arriving over SMTP: the RCPT check, and storing a parsed message for a
 * live inbox (its raw bytes, attachment contents, codes and links) with its
 * `message.received` event, in one transaction. On commit, the waiters of the
 * inbox are woken here and, through NOTIFY, on every other instance.
 */
import { findLiveInboxByAddress, lockLiveInboxByAddress } from "../inboxes/repo.ts";
import { INBOX_CHANNEL, type InboxDeps } from "../inboxes/service.ts";
import { newId } from "../shared/ids.ts";
import { extractCodes, extractLinks } from "./extract.ts";
import * as repo from "./repo.ts";
import type { AttachmentMeta, Link } from "./schemas.ts";

/** At most this many link URLs travel in the `message.received` event; the message has them all. */
const EVENT_LINKS = 20;

/** Whether mail for this address (any case) would be accepted now. */
export async function acceptsMail(
  deps: Pick<InboxDeps, "sql" | "clock" | "config">,
  address: string,
): Promise<boolean> {
  const normalized = address.toLowerCase();
  const at = normalized.lastIndexOf("@");
  if (at <= 0 || normalized.slice(at + 1) !== deps.config.mailDomain) return false;
  return (await findLiveInboxByAddress(deps.sql, normalized, deps.clock.now())) !== undefined;
}

/** An attachment of a received message, with its contents. */
export interface IncomingAttachment {
  filename: string | null;
  contentType: string;
  content: Uint8Array;
}

/** A received message, parsed, as it is stored for each recipient. */
export interface IncomingMessage {
  from: string;
  subject: string;
  text: string | null;
  html: string | null;
  headers: Record<string, string>;
  attachments: IncomingAttachment[];
  /** The bytes as received in DATA (after dot-unstuffing). */
  raw: Uint8Array;
}

/** A message with the codes and links found in it: found once, stored for every recipient. */
export interface PreparedMessage extends IncomingMessage {
  codes: string[];
  links: Link[];
}

/** Finds the codes and links of a message (pure: no I/O, done before any transaction). */
export function prepareMessage(message: IncomingMessage): PreparedMessage {
  const mail = { subject: message.subject, text: message.text, html: message.html };
  return { ...message, codes: extractCodes(mail), links: extractLinks(mail) };
}

/**
 * Stores a message for the live inbox of `address` and emits
 * `message.received`, in one transaction. Returns undefined when the inbox
 * expired or was deleted since the RCPT check.
 */
export async function receiveMessage(
  deps: InboxDeps,
  address: string,
  message: PreparedMessage,
): Promise<{ inboxId: string; messageId: string } | undefined> {
  const now = deps.clock.now();
  const { codes, links } = message;
  const stored = await deps.outbox.transaction(async (tx, emit) => {
    const inbox = await lockLiveInboxByAddress(tx, address.toLowerCase(), now);
    if (!inbox) return undefined;
    const messageId = newId("msg", now.getTime());
    const attachments = message.attachments.map((a) => ({ id: newId("att", now.getTime()), ...a }));
    const meta: AttachmentMeta[] = attachments.map((a) => ({
      id: a.id,
      filename: a.filename,
      contentType: a.contentType,
      size: a.content.byteLength,
    }));
    await emit(inbox.accountId, "message.received", {
      inboxId: inbox.id,
      messageId,
      from: message.from,
      to: inbox.address,
      subject: message.subject,
      receivedAt: now.toISOString(),
      size: message.raw.byteLength,
      codes,
      links: links.slice(0, EVENT_LINKS).map((l) => l.url),
    }, now);
    // Last: it settles the message's place in the inbox's order, held to the commit.
    await repo.storeMessage(
      tx,
      {
        id: messageId,
        inboxId: inbox.id,
        from: message.from,
        to: inbox.address,
        subject: message.subject,
        text: message.text,
        html: message.html,
        headers: message.headers,
        attachments: meta,
        codes,
        links,
        size: message.raw.byteLength,
        raw: message.raw,
        receivedAt: now,
      },
      attachments,
      INBOX_CHANNEL,
    );
    return { inboxId: inbox.id, messageId };
  });
  if (stored) deps.hub.publishLocal(INBOX_CHANNEL, stored.inboxId);
  return stored;
}
