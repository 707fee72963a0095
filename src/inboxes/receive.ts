/**
 * Mail arriving over SMTP: the RCPT check, and storing a parsed message for a
 * live inbox with its `message.received` event, in one transaction.
 */
import { newId } from "../shared/ids.ts";
import * as repo from "./repo.ts";
import type { AttachmentMeta } from "./schemas.ts";
import type { InboxDeps } from "./service.ts";

/** Whether mail for this address (any case) would be accepted now. */
export async function acceptsMail(deps: InboxDeps, address: string): Promise<boolean> {
  const normalized = address.toLowerCase();
  const at = normalized.lastIndexOf("@");
  if (at <= 0 || normalized.slice(at + 1) !== deps.config.mailDomain) return false;
  return (await repo.findLiveInboxByAddress(deps.sql, normalized, deps.clock.now())) !== undefined;
}

/** A received message, parsed, as it is stored for each recipient. */
export interface IncomingMessage {
  from: string;
  subject: string;
  text: string | null;
  html: string | null;
  headers: Record<string, string>;
  attachments: AttachmentMeta[];
  /** Bytes of the raw message. */
  size: number;
}

/**
 * Stores a message for the live inbox of `address` and emits
 * `message.received`, in one transaction. Returns undefined when the inbox
 * expired or was deleted since the RCPT check.
 */
export async function receiveMessage(
  deps: InboxDeps,
  address: string,
  message: IncomingMessage,
): Promise<{ inboxId: string; messageId: string } | undefined> {
  const now = deps.clock.now();
  return await deps.outbox.transaction(async (tx, emit) => {
    const inbox = await repo.lockLiveInboxByAddress(tx, address.toLowerCase(), now);
    if (!inbox) return undefined;
    const messageId = newId("msg", now.getTime());
    await repo.insertMessage(tx, {
      id: messageId,
      inboxId: inbox.id,
      from: message.from,
      to: inbox.address,
      subject: message.subject,
      text: message.text,
      html: message.html,
      headers: message.headers,
      attachments: message.attachments,
      size: message.size,
      receivedAt: now,
    });
    await emit(inbox.accountId, "message.received", {
      inboxId: inbox.id,
      messageId,
      from: message.from,
      to: inbox.address,
      subject: message.subject,
      receivedAt: now.toISOString(),
      size: message.size,
    }, now);
    return { inboxId: inbox.id, messageId };
  });
}
