/**
 * Inbox rules: creation (with its `inbox.created` event), reading and
 * deletion. Mail arriving over SMTP is stored by `receive.ts`.
 */
import type { Sql } from "../db/client.ts";
import type { Config } from "../config.ts";
import type { Clock } from "../shared/clock.ts";
import type { Emit, Outbox } from "../deliveries/outbox.ts";
import { ApiError, notFound, unauthorized } from "../errors.ts";
import { UNAUTHORIZED_HINTS } from "../auth/hints.ts";
import { newId } from "../shared/ids.ts";
import { DEFAULT_PAGE_SIZE, type Page, toPage } from "../shared/cursor.ts";
import { pagePosition } from "../http/page.ts";
import { lockAccountPlan } from "../accounts/repo.ts";
import type { NotificationHub } from "../notifications/hub.ts";
import { notify } from "../notifications/repo.ts";
import * as repo from "./repo.ts";
import { type Reach, reaches } from "../auth/reach.ts";
import { isReservedLocalPart } from "./reserved.ts";
import { DEFAULT_TTL_SECONDS, type InboxRow } from "./schemas.ts";

/** What the inbox rules need. */
export interface InboxDeps {
  sql: Sql;
  clock: Clock;
  /** Events (`inbox.created`, `inbox.expired`, `message.received`) go through it. */
  outbox: Outbox;
  /** Wakes this instance's message waiters when an inbox is deleted. */
  hub: Pick<NotificationHub, "publishLocal">;
  config: Pick<Config, "mailDomain">;
}

/**
 * The channel whose payload is the id of an inbox that got a message or was
 * deleted: waiters of that inbox look again (messages/waiters.ts).
 */
export const INBOX_CHANNEL = "inbox_messages";

const RANDOM_LOCAL_PART_LENGTH = 12;
const LOCAL_PART_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";
/** A random address colliding is a 1-in-36^12 event; a few tries make it moot. */
const RANDOM_ATTEMPTS = 5;

export const inboxNotFound = (): ApiError => notFound("INBOX_NOT_FOUND", "Inbox not found");
const addressTaken = (): ApiError => new ApiError(400, "ADDRESS_TAKEN", "Address already taken");
const reservedAddress = (address: string): ApiError =>
  new ApiError(
    400,
    "RESERVED_ADDRESS",
    `${address} is reserved: role addresses such as postmaster, abuse or admin cannot be inboxes`,
  );

const inboxLimit = (max: number): ApiError => new ApiError(400, "INBOX_LIMIT", `Maximum ${max} inboxes on your plan`);

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

/** Emits `inbox.expired` for an inbox being removed in the transaction of `emit` (sweep, or reuse of its address). */
export async function emitExpired(emit: Emit, inbox: InboxRow, now: Date): Promise<void> {
  await emit(inbox.accountId, "inbox.expired", {
    inboxId: inbox.id,
    address: inbox.address,
    expiredAt: inbox.expiresAt.toISOString(),
  }, now);
}

/** A random local part that is not a role mailbox (a 1-in-36^12 draw could spell `sslwebmaster`). */
function randomFreeLocalPart(): string {
  while (true) {
    const localPart = randomLocalPart();
    if (!isReservedLocalPart(localPart)) return localPart;
  }
}

/**
 * Creates an inbox and emits `inbox.created`. 400 RESERVED_ADDRESS for a role
 * mailbox, ADDRESS_TAKEN when a live inbox has the address, INBOX_LIMIT when
 * the account already holds its plan's number of live inboxes.
 */
export async function createInbox(
  deps: InboxDeps & { config: Pick<Config, "inboxesPerAccount"> },
  accountId: string,
  input: { localPart?: string | undefined; ttlSeconds?: number | undefined },
): Promise<InboxRow> {
  if (input.localPart !== undefined && isReservedLocalPart(input.localPart)) {
    throw reservedAddress(`${input.localPart}@${deps.config.mailDomain}`);
  }
  const now = deps.clock.now();
  const expiresAt = new Date(now.getTime() + (input.ttlSeconds ?? DEFAULT_TTL_SECONDS) * 1000);
  const attempts = input.localPart === undefined ? RANDOM_ATTEMPTS : 1;
  for (let i = 0; i < attempts; i++) {
    const address = `${input.localPart ?? randomFreeLocalPart()}@${deps.config.mailDomain}`;
    const row = await deps.outbox.transaction(async (tx, emit) => {
      // The account row is the lock of "count, then insert": concurrent
      // creations of one account (on any instance) run one after another, so
      // none of them can see a count that another is about to raise. The
      // insert is sent with the lock, one round trip: the server runs it once
      // the lock is granted, with a snapshot of its own (READ COMMITTED takes
      // one per statement), so its count holds every inbox committed before;
      // the lock is then held for one round trip less (16 clients of one
      // account: 452 against 396 creations/s, tests/bench/README.md, events).
      const inbox = { id: newId("inb", now.getTime()), accountId, address, createdAt: now, expiresAt };
      const [locked, first] = await Promise.allSettled([
        lockAccountPlan(tx, accountId),
        repo.insertInbox(tx, inbox),
      ]);
      if (locked.status === "rejected") throw locked.reason;
      const plan = locked.value;
      // An account deleted under a still-valid credential (its insert failed on the foreign key).
      if (plan === undefined) throw unauthorized(UNAUTHORIZED_HINTS.accountGone);
      if (first.status === "rejected") throw first.reason;
      let inserted = first.value;
      if (!inserted) {
        // An expired inbox the sweep has not reached yet still holds the row of
        // its address: it is expired here and now, event included, so the
        // address is free again the moment its inbox expires.
        const stale = await repo.deleteExpiredByAddress(tx, address, now);
        for (const expired of stale) await emitExpired(emit, expired, now);
        if (stale.length > 0) inserted = await repo.insertInbox(tx, inbox);
      }
      if (!inserted) return undefined;
      // Counted with the new inbox, so a taken address answers ADDRESS_TAKEN
      // whatever the count (duplicate before maximum, as for webhooks);
      // refusing rolls the insert back.
      const max = deps.config.inboxesPerAccount[plan];
      if (inserted.live > max) throw inboxLimit(max);
      await emit(accountId, "inbox.created", {
        inboxId: inserted.inbox.id,
        address: inserted.inbox.address,
        expiresAt: inserted.inbox.expiresAt.toISOString(),
      }, now);
      return inserted.inbox;
    });
    if (row) return row;
  }
  throw addressTaken();
}

/** One of the account's live inboxes; 404 otherwise. */
export async function getInbox(
  deps: Pick<InboxDeps, "sql" | "clock">,
  reach: Reach,
  id: string,
): Promise<InboxRow> {
  if (!reaches(reach, id)) throw inboxNotFound();
  const row = await repo.findLiveInbox(deps.sql, reach.accountId, id, deps.clock.now());
  if (!row) throw inboxNotFound();
  return row;
}

/** A page of the account's live inboxes, newest first. */
export async function listInboxes(
  deps: InboxDeps,
  reach: Reach,
  page: { limit?: number | undefined; cursor?: string | undefined },
): Promise<Page<InboxRow>> {
  const limit = page.limit ?? DEFAULT_PAGE_SIZE;
  const after = pagePosition(page.cursor);
  const rows = await repo.listLiveInboxes(
    deps.sql,
    reach.accountId,
    deps.clock.now(),
    limit + 1,
    after,
    reach.inboxIds,
  );
  return toPage(rows, limit, (r) => [r.createdAt, r.id]);
}

/** Deletes one of the account's live inboxes and its messages; no event (deletion is not expiry). */
export async function deleteInbox(deps: InboxDeps, reach: Reach, id: string): Promise<void> {
  if (!reaches(reach, id)) throw inboxNotFound();
  const deleted = await deps.sql.begin(async (tx) => {
    const deleted = await repo.deleteLiveInbox(tx, reach.accountId, id, deps.clock.now());
    // Requests waiting for a message of this inbox, on any instance, answer 404 at once.
    if (deleted) await notify(tx, INBOX_CHANNEL, id);
    return deleted;
  });
  if (!deleted) throw inboxNotFound();
  deps.hub.publishLocal(INBOX_CHANNEL, id);
}
