/**
 * Message rules: listing and reading with filters, waiting for the next
 * matching message (a long poll that holds no database connection), the raw
 * message, attachment contents and deletion. Every message is reached
 * through one of the account's live inboxes (404 INBOX_NOT_FOUND otherwise).
 */
import type { Sql } from "../db/client.ts";
import { ApiError, notFound } from "../errors.ts";
import { pagePosition } from "../http/page.ts";
import { getInbox, inboxNotFound } from "../inboxes/service.ts";
import type { Clock } from "../shared/clock.ts";
import { DEFAULT_PAGE_SIZE, type Page, toPage } from "../shared/cursor.ts";
import * as repo from "./repo.ts";
import type { Reach } from "../auth/reach.ts";
import type { AttachmentMeta, MessageFilters, MessageRow, MessageSummaryRow } from "./schemas.ts";
import type { MessageWaiters } from "./waiters.ts";
import type { Close } from "../rate_limit/open_requests.ts";

/** What the message rules need. */
export interface MessageDeps {
  sql: Sql;
  clock: Clock;
  waiters: MessageWaiters;
}

/** The filters of a request, as the query gives them. */
export interface FilterQuery {
  from?: string | undefined;
  to?: string | undefined;
  subject?: string | undefined;
  contains?: string | undefined;
  since?: string | undefined;
}

const messageNotFound = (): ApiError => notFound("MESSAGE_NOT_FOUND", "Message not found");
const attachmentNotFound = (): ApiError => notFound("ATTACHMENT_NOT_FOUND", "Attachment not found");

function filtersOf(q: FilterQuery): MessageFilters {
  return {
    from: q.from,
    to: q.to,
    subject: q.subject,
    contains: q.contains,
    since: q.since ? new Date(q.since) : undefined,
  };
}

/** A page of a live inbox's messages matching the filters, newest first. */
export async function listMessages(
  deps: MessageDeps,
  reach: Reach,
  inboxId: string,
  query: FilterQuery & { limit?: number | undefined; cursor?: string | undefined },
): Promise<Page<MessageSummaryRow>> {
  const inbox = await getInbox(deps, reach, inboxId);
  const limit = query.limit ?? DEFAULT_PAGE_SIZE;
  const after = pagePosition(query.cursor);
  const rows = await repo.listMessages(deps.sql, inbox.id, limit + 1, after, filtersOf(query));
  return toPage(rows, limit, (r) => [r.receivedAt, r.id]);
}

/** One message of one of the account's live inboxes; 404 otherwise. */
export async function getMessage(
  deps: MessageDeps,
  reach: Reach,
  inboxId: string,
  messageId: string,
): Promise<MessageRow> {
  const inbox = await getInbox(deps, reach, inboxId);
  const row = await repo.findMessage(deps.sql, inbox.id, messageId);
  if (!row) throw messageNotFound();
  return row;
}

/**
 * The earliest message of the inbox after `after` that matches the filters,
 * whether it arrived before the call or during it; undefined when none came
 * within `timeoutMs` or the client went away (`signal`). 404 when the inbox
 * is not one of the account's live inboxes, also when it is deleted or
 * expires during the wait.
 *
 * The first look reads the inbox's history once; then the wait joins the
 * inbox's group (wait_groups.ts), which reads only what arrives. A wait that
 * holds counts towards the account's bound (`open`, which refuses with 429);
 * one answered at once does not.
 */
export async function waitForMessage(
  deps: MessageDeps,
  reach: Reach,
  inboxId: string,
  query: FilterQuery & { after?: string | undefined; timeoutMs: number },
  signal: AbortSignal,
  open: () => Promise<Close>,
): Promise<MessageRow | undefined> {
  const deadline = performance.now() + query.timeoutMs;
  const inbox = await getInbox(deps, reach, inboxId);
  const after = query.after === undefined ? undefined : await repo.messageSeq(deps.sql, inbox.id, query.after);
  if (query.after !== undefined && !after) {
    throw new ApiError(400, "VALIDATION_ERROR", "Invalid query parameters", [
      { path: "after", message: "Not a message of this inbox" },
    ]);
  }
  const filters = filtersOf(query);
  const look = async (afterSeq: string | undefined) => {
    const found = await repo.firstMatching(deps.sql, reach.accountId, inbox.id, deps.clock.now(), afterSeq, filters);
    if (!found.live) throw inboxNotFound();
    return found;
  };
  const first = await look(after);
  if (first.message) return first.message;
  if (query.timeoutMs <= 0 || signal.aborted) return undefined;
  const close = await open();
  try {
    // "0" when the inbox has no message yet: every seq is above it.
    const at = first.lastSeq ?? after ?? "0";
    while (true) {
      const left = deadline - performance.now();
      const end = left <= 0
        ? { how: "timeout" as const, afterSeq: at }
        : await deps.waiters.groups.wait(inbox, at, filters, left, signal);
      switch (end.how) {
        case "matched": {
          const message = await repo.findMessage(deps.sql, inbox.id, end.messageId);
          // Deleted since it matched: wait on for the next one.
          if (message) return message;
          continue;
        }
        case "gone":
          throw inboxNotFound();
        case "failed":
          throw end.error;
        // The client left, or the server is shutting down: nothing (a client's next poll goes to a live instance).
        case "aborted":
        case "closed":
          return undefined;
        case "timeout": {
          // One last look of its own at what arrived after its position: a message stored just before the
          // deadline whose wake-up had not reached the group yet still answers.
          const last = await look(end.afterSeq);
          return last.message;
        }
      }
    }
  } finally {
    close();
  }
}

/** The bytes a message arrived as; 404 for an unknown message (or one stored before raw messages were kept). */
export async function getRawMessage(
  deps: MessageDeps,
  reach: Reach,
  inboxId: string,
  messageId: string,
): Promise<Uint8Array<ArrayBuffer>> {
  const inbox = await getInbox(deps, reach, inboxId);
  const raw = await repo.findRaw(deps.sql, inbox.id, messageId);
  if (!raw) throw messageNotFound();
  return raw;
}

/** An attachment's metadata and contents; 404 for an unknown inbox, message or attachment. */
export async function getAttachment(
  deps: MessageDeps,
  reach: Reach,
  inboxId: string,
  messageId: string,
  attachmentId: string,
): Promise<{ meta: AttachmentMeta; content: Uint8Array<ArrayBuffer> }> {
  const inbox = await getInbox(deps, reach, inboxId);
  const found = await repo.findAttachment(deps.sql, inbox.id, messageId, attachmentId);
  if (!found.message) throw messageNotFound();
  if (!found.attachment) throw attachmentNotFound();
  return found.attachment;
}

/** Deletes one message of one of the account's live inboxes; 404 otherwise. */
export async function deleteMessage(
  deps: MessageDeps,
  reach: Reach,
  inboxId: string,
  messageId: string,
): Promise<void> {
  const inbox = await getInbox(deps, reach, inboxId);
  if (!await repo.deleteMessage(deps.sql, inbox.id, messageId)) throw messageNotFound();
}
