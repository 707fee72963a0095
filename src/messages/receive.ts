/**
 * Mail arriving over SMTP: storing parsed messages for the live inboxes of
 * their recipients (raw bytes, attachment contents, codes and links) with
 * their `message.received` events and deliveries, in one statement per batch
 * of arrivals. On commit, the waiters of the inboxes are woken here and,
 * through NOTIFY, on every other instance.
 */
import { getLogger } from "@logtape/logtape";
import { LiveAddresses, type LiveInbox } from "../inboxes/live_addresses.ts";
import { type Recipient, recipientOf } from "../inboxes/recipient.ts";
import { newEvent } from "../deliveries/outbox.ts";
import { INBOX_CHANNEL, type InboxDeps } from "../inboxes/service.ts";
import { Batcher } from "../shared/batcher.ts";
import { newId } from "../shared/ids.ts";
import * as repo from "./repo.ts";
import type { Link } from "./schemas.ts";
import type { EventDataMap } from "../events/schemas.ts";

const log = getLogger(["inbox", "smtp"]);

/** At most this many link URLs travel in the `message.received` event; the message has them all. */
const EVENT_LINKS = 20;

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

/** A received message and the recipients (RCPT TO addresses) it is for. */
export interface Arrival {
  addresses: string[];
  message: PreparedMessage;
}

/** A message stored for one inbox. */
export interface Stored {
  inboxId: string;
  messageId: string;
}

/** The `message.received` data of a copy stored for `inboxId` (the event carries at most EVENT_LINKS links). */
function receivedData(
  message: PreparedMessage,
  inboxId: string,
  to: string,
  messageId: string,
  now: Date,
): EventDataMap["message.received"] {
  return {
    inboxId,
    messageId,
    from: message.from,
    to,
    subject: message.subject,
    receivedAt: now.toISOString(),
    size: message.raw.byteLength,
    codes: message.codes,
    links: message.links.slice(0, EVENT_LINKS).map((l) => l.url),
  };
}

/** A copy of an arrival for one recipient, with the ids of its message and attachments. */
interface Copy {
  /** The recipient's inbox and the address the copy keeps (inboxes/recipient.ts). */
  recipient: Recipient;
  inbox: LiveInbox;
  message: PreparedMessage;
  id: string;
  attachments: (IncomingAttachment & { id: string })[];
}

/**
 * One copy per distinct recipient of each arrival (as its message keeps it:
 * tags are distinct recipients of one inbox) whose inbox is live in
 * `inboxes` (by inbox address), in arrival order.
 */
function copiesOf(
  arrivals: Arrival[],
  inboxes: ReadonlyMap<string, LiveInbox>,
  mailDomain: string,
  now: Date,
): Copy[][] {
  return arrivals.map(({ addresses, message }) =>
    recipientsOf(addresses, mailDomain).flatMap((recipient) => {
      const inbox = inboxes.get(recipient.inbox);
      if (!inbox) return [];
      return [{
        recipient,
        inbox,
        message,
        id: newId("msg", now.getTime()),
        attachments: message.attachments.map((a) => ({ id: newId("att", now.getTime()), ...a })),
      }];
    })
  );
}

/** The distinct recipients of `addresses` that are inboxes' addresses. */
function recipientsOf(addresses: string[], mailDomain: string): Recipient[] {
  const byTo = new Map<string, Recipient>();
  for (const address of addresses) {
    const recipient = recipientOf(address, mailDomain);
    if (recipient) byTo.set(recipient.to, recipient);
  }
  return [...byTo.values()];
}

/** A copy's row (built before the statement: locks are held only while it runs). */
function copyRow({ recipient, inbox, message, id, attachments }: Copy): repo.NewCopy {
  return {
    id,
    inboxId: inbox.id,
    to: recipient.to,
    from: message.from,
    subject: message.subject,
    text: message.text,
    html: message.html,
    headers: message.headers,
    attachments: attachments.map((a) => ({
      id: a.id,
      filename: a.filename,
      contentType: a.contentType,
      size: a.content.byteLength,
    })),
    codes: message.codes,
    links: message.links,
    size: message.raw.byteLength,
    raw: message.raw,
  };
}

/** What became of one arrival: the copies stored, or why it could not be stored. */
export type ArrivalOutcome = { stored: Stored[] } | { error: unknown };

/**
 * Stores arrivals for the live inboxes of their recipients (`inboxes`, by
 * lowercase address, as the RCPT check found them) with one
 * `message.received` per copy stored and its deliveries: one statement
 * (messages/repo.ts `storeCopiesChange`, run by the outbox), for a batch as
 * for a single arrival. A recipient with no inbox in `inboxes` gets no copy.
 *
 * A copy whose inbox is gone by then (expired or deleted since the RCPT
 * check) is not stored; if its address is live again under another inbox
 * (deleted and created anew meanwhile), the same statement stores it there.
 *
 * Rejects only when the first statement failed, and then nothing was
 * stored. Once it has committed, a failure of that second step is the
 * outcome of the arrivals it concerns alone: they are refused (the sender
 * tries again, and their copies stored already are stored twice, never
 * lost), the others are stored.
 */
export async function storeArrivals(
  deps: StoreDeps,
  arrivals: Arrival[],
  inboxes: ReadonlyMap<string, LiveInbox>,
): Promise<ArrivalOutcome[]> {
  const now = deps.clock.now();
  const copies = copiesOf(arrivals, inboxes, deps.config.mailDomain, now);
  const stored = await storeCopies(deps, copies.flat(), now);
  const outcomes: ArrivalOutcome[] = copies.map((list) => ({
    stored: list.filter((c) => stored.has(c.id)).map((c) => ({ inboxId: c.inbox.id, messageId: c.id })),
  }));
  const gone = copies.flat().filter((c) => !stored.has(c.id));
  if (gone.length === 0) return outcomes;
  // Is any of the gone inboxes' addresses live again, under another inbox?
  let reborn: Map<string, LiveInbox>;
  try {
    reborn = await deps.liveAddresses.lookUp(gone.map((c) => c.recipient.inbox));
  } catch (error) {
    return copies.map((list, i) => list.some((c) => !stored.has(c.id)) ? { error } : outcomes[i]!);
  }
  for (const [i, list] of copies.entries()) {
    const again = list.flatMap((c) => {
      const now = reborn.get(c.recipient.inbox);
      return !stored.has(c.id) && now && now.id !== c.inbox.id ? [{ ...c, inbox: now }] : [];
    });
    if (again.length === 0) continue;
    try {
      const more = await storeCopies(deps, again, now);
      const kept = again.filter((c) => more.has(c.id)).map((c) => ({ inboxId: c.inbox.id, messageId: c.id }));
      outcomes[i] = { stored: [...(outcomes[i] as { stored: Stored[] }).stored, ...kept] };
    } catch (error) {
      outcomes[i] = { error };
    }
  }
  return outcomes;
}

/** What storing needs. */
export type StoreDeps = Pick<InboxDeps, "sql" | "clock" | "outbox" | "hub" | "config"> & {
  liveAddresses: LiveAddresses;
};

/** Runs the statement for `copies`; resolves to the ids of those stored, and wakes their inboxes' waiters here. */
async function storeCopies(deps: StoreDeps, copies: Copy[], now: Date): Promise<Set<string>> {
  if (copies.length === 0) return new Set();
  const rows = copies.map(copyRow);
  const contents = copies.flatMap((c) => c.attachments.map((a) => ({ id: a.id, messageId: c.id, content: a.content })));
  const events = copies.map((c) => ({
    event: newEvent(
      "message.received",
      receivedData(c.message, c.inbox.id, c.recipient.to, c.id, now),
      now,
    ),
    accountId: c.inbox.accountId,
    ref: c.id,
  }));
  const inboxes = await deps.outbox.statement<repo.ReceivingInbox>({
    ...repo.storeCopiesChange(deps.sql, rows, contents, now, INBOX_CHANNEL),
    events,
  });
  for (const inbox of inboxes) deps.hub.publishLocal(INBOX_CHANNEL, inbox.id);
  // Every copy of a locked inbox was stored: the statement stores all of an inbox's copies or none.
  const live = new Set(inboxes.map((i) => i.id));
  return new Set(copies.filter((c) => live.has(c.inbox.id)).map((c) => c.id));
}

/** Mail arriving at one instance: the RCPT check and the storing, each batched (`createReceiver`). */
export interface Receiver {
  /** The live inbox mail for this address (any case, a tag allowed) would go to now; undefined: refused. */
  inboxOf(address: string): Promise<LiveInbox | undefined>;
  /** Stores the message for its recipients' live inboxes; resolves to the copies stored, once committed. */
  receive(arrival: Arrival): Promise<Stored[]>;
}

/** Arrivals one batch carries at most. */
const BATCH_ARRIVALS = 64;
/** Bytes of raw messages one batch carries at most past its first (a larger message goes alone). */
const BATCH_BYTES = 4 * 1024 * 1024;
/**
 * Batches being written at once: one. A second batch would mostly wait for the
 * first's inbox and account locks while holding a connection; one at a time,
 * each batch takes everything that arrived meanwhile (8 kept SMTP connections
 * to one inbox, same run: 1,553 messages/s with one in flight, 1,327 with two,
 * 1,171 with three).
 */
const BATCHES_IN_FLIGHT = 1;

/**
 * The receiver of one SMTP listener. RCPT checks go through the live
 * addresses of inboxes/ (batched lookups, remembered for a second). Storing
 * is batched too (group commit): what arrives while a batch is on its way to
 * the database waits and goes in the next one, a statement for the lot
 * (`storeArrivals`), so a busy listener pays one round trip and the commit's
 * flush once per batch; a quiet one sends each arrival at once. The sender
 * gets its `250` only after the commit. A batch that fails is written again
 * one arrival at a time, by the same statement, so that one message the
 * database refuses fails alone.
 */
export function createReceiver(deps: Omit<StoreDeps, "liveAddresses">): Receiver {
  const live = new LiveAddresses(deps);
  const store = { ...deps, liveAddresses: live };
  const { mailDomain } = deps.config;
  const addressesOf = (arrivals: Arrival[]) =>
    recipientsOf(arrivals.flatMap((a) => a.addresses), mailDomain).map((r) => r.inbox);
  const batches = new Batcher<Arrival, ArrivalOutcome>(async (arrivals) => {
    try {
      return await storeArrivals(store, arrivals, await live.inboxesOf(addressesOf(arrivals)));
    } catch (error) {
      // Nothing of the batch was stored. Again one arrival at a time: the one the database refuses fails alone.
      log.warn("Storing {count} messages in one statement failed; storing them one by one: {error}", {
        count: arrivals.length,
        error: String(error),
      });
      const outcomes: ArrivalOutcome[] = [];
      for (const arrival of arrivals) {
        outcomes.push(
          await live.inboxesOf(addressesOf([arrival]))
            .then((inboxes) => storeArrivals(store, [arrival], inboxes))
            .then(([outcome]) => outcome!, (error) => ({ error })),
        );
      }
      return outcomes;
    }
  }, {
    maxItems: BATCH_ARRIVALS,
    concurrency: BATCHES_IN_FLIGHT,
    maxWeight: BATCH_BYTES,
    weight: (a) => a.message.raw.byteLength * a.addresses.length,
  });

  return {
    async inboxOf(address) {
      const recipient = recipientOf(address, mailDomain);
      return recipient ? await live.inboxOf(recipient.inbox) : undefined;
    },
    async receive(arrival) {
      const outcome = await batches.submit(arrival);
      if ("error" in outcome) throw outcome.error;
      return outcome.stored;
    },
  };
}
