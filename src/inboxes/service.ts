/**
 * Inbox rules: creation (with its `inbox.created` event), reading, deletion,
 * and storing a message that arrived over SMTP (with `message.received`).
 */
import type { AppDeps } from "../deps.ts";
import { ApiError, notFound } from "../errors.ts";
import { newId } from "../shared/ids.ts";
import { decodeCursor, DEFAULT_PAGE_SIZE, type Page, toPage } from "../shared/cursor.ts";
import { emit } from "../events/emit.ts";
import type { Tx } from "../db/client.ts";
import * as repo from "./repo.ts";
import {
  type AttachmentMeta,
  DEFAULT_TTL_SECONDS,
  type InboxRow,
  type MessageRow,
  type MessageSummaryRow,
} from "./schemas.ts";

/** What the inbox rules need from the app. */
export type InboxDeps = Pick<AppDeps, "sql" | "clock" | "config" | "deliveries">;

const RANDOM_LOCAL_PART_LENGTH = 12;
const LOCAL_PART_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";
/** A random address colliding is a 1-in-36^12 event; a few tries make it moot. */
const RANDOM_ATTEMPTS = 5;

export const inboxNotFound = (): ApiError => notFound("INBOX_NOT_FOUND", "Inbox not found");
const messageNotFound = (): ApiError => notFound("MESSAGE_NOT_FOUND", "Message not found");
const addressTaken = (): ApiError => new ApiError(400, "ADDRESS_TAKEN", "Address already taken");

/** A random local part: lowercase letters and digits, uniformly drawn. */
export function randomLocalPart(length = RANDOM_LOCAL_PART_LENGTH): string {
  let out = "";
  while (out.length < length) {
    for (const b of crypto.getRandomValues(new Uint8Array(length))) {
      // 252 = 7 * 36: rejecting the top values keeps every character equally likely.
      if (b < 252 && out.length < length) out += LOCAL_PART_ALPHABET[b % 36];
    }
  }
  return out;
}

/** Emits `inbox.expired` for an inbox being removed in `tx` (sweep, or reuse of its address). */
export async function emitExpired(tx: Tx, inbox: InboxRow, now: Date): Promise<void> {
  await emit(tx, inbox.accountId, "inbox.expired", {
    inboxId: inbox.id,
    address: inbox.address,
    expiredAt: inbox.expiresAt.toISOString(),
  }, now);
}

/** Creates an inbox and emits `inbox.created`; 400 ADDRESS_TAKEN when a live inbox has the address. */
export async function createInbox(
  deps: InboxDeps,
  accountId: string,
  input: { localPart?: string | undefined; ttlSeconds?: number | undefined },
): Promise<InboxRow> {
  const now = deps.clock.now();
  const expiresAt = new Date(now.getTime() + (input.ttlSeconds ?? DEFAULT_TTL_SECONDS) * 1000);
  const attempts = input.localPart === undefined ? RANDOM_ATTEMPTS : 1;
  for (let i = 0; i < attempts; i++) {
    const address = `${input.localPart ?? randomLocalPart()}@${deps.config.mailDomain}`;
    const row = await deps.sql.begin(async (tx) => {
      // An expired inbox the sweep has not reached yet still holds the row of
      // its address: it is expired here and now, event included, so the
      // address is free again the moment its inbox expires.
      for (const stale of await repo.deleteExpiredByAddress(tx, address, now)) await emitExpired(tx, stale, now);
      const inserted = await repo.insertInbox(tx, {
        id: newId("inb", now.getTime()),
        accountId,
        address,
        createdAt: now,
        expiresAt,
      });
      if (!inserted) return undefined;
      await emit(tx, accountId, "inbox.created", {
        inboxId: inserted.id,
        address: inserted.address,
        expiresAt: inserted.expiresAt.toISOString(),
      }, now);
      return inserted;
    });
    if (row) {
      deps.deliveries.wake();
      return row;
    }
  }
  throw addressTaken();
}

/** One of the account's live inboxes; 404 otherwise. */
export async function getInbox(deps: InboxDeps, accountId: string, id: string): Promise<InboxRow> {
  const row = await repo.findLiveInbox(deps.sql, accountId, id, deps.clock.now());
  if (!row) throw inboxNotFound();
  return row;
}

/** A page of the account's live inboxes, newest first. */
export async function listInboxes(
  deps: InboxDeps,
  accountId: string,
  page: { limit?: number | undefined; cursor?: string | undefined },
): Promise<Page<InboxRow>> {
  const limit = page.limit ?? DEFAULT_PAGE_SIZE;
  const after = page.cursor ? decodeCursor(page.cursor) : undefined;
  const rows = await repo.listLiveInboxes(deps.sql, accountId, deps.clock.now(), limit + 1, after);
  return toPage(rows, limit, (r) => [r.createdAt, r.id]);
}

/** Deletes one of the account's live inboxes and its messages; no event (deletion is not expiry). */
export async function deleteInbox(deps: InboxDeps, accountId: string, id: string): Promise<void> {
  if (!await repo.deleteLiveInbox(deps.sql, accountId, id, deps.clock.now())) throw inboxNotFound();
}

/** A page of a live inbox's messages, newest first. */
export async function listMessages(
  deps: InboxDeps,
  accountId: string,
  inboxId: string,
  page: { limit?: number | undefined; cursor?: string | undefined },
): Promise<Page<MessageSummaryRow>> {
  const inbox = await getInbox(deps, accountId, inboxId);
  const limit = page.limit ?? DEFAULT_PAGE_SIZE;
  const after = page.cursor ? decodeCursor(page.cursor) : undefined;
  const rows = await repo.listMessages(deps.sql, inbox.id, limit + 1, after);
  return toPage(rows, limit, (r) => [r.receivedAt, r.id]);
}

/** One message of one of the account's live inboxes; 404 otherwise. */
export async function getMessage(
  deps: InboxDeps,
  accountId: string,
  inboxId: string,
  messageId: string,
): Promise<MessageRow> {
  const inbox = await getInbox(deps, accountId, inboxId);
  const row = await repo.findMessage(deps.sql, inbox.id, messageId);
  if (!row) throw messageNotFound();
  return row;
}

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
  const result = await deps.sql.begin(async (tx) => {
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
    await emit(tx, inbox.accountId, "message.received", {
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
  if (result) deps.deliveries.wake();
  return result;
}
