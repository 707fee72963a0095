/**
 * Mail arriving over SMTP: the RCPT check, and storing parsed messages for
 * live inboxes (raw bytes, attachment contents, codes and links) with their
 * `message.received` events, in one statement per batch of arrivals (one
 * transaction where a batch is written again message by message). On
 * commit, the waiters of the inboxes are woken here and, through NOTIFY, on
 * every other instance.
 */
import { getLogger } from "@logtape/logtape";
import { liveAddresses } from "../inboxes/repo.ts";
import { newEvent } from "../deliveries/outbox.ts";
import { INBOX_CHANNEL, type InboxDeps } from "../inboxes/service.ts";
import { Batcher } from "../shared/batcher.ts";
import { newId } from "../shared/ids.ts";
import { extractCodes, extractLinks } from "./extract/mod.ts";
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

/** Finds the codes and links of a message (pure: no I/O, done before any transaction). */
export function prepareMessage(message: IncomingMessage): PreparedMessage {
  const mail = { subject: message.subject, text: message.text, html: message.html };
  return { ...message, codes: extractCodes(mail), links: extractLinks(mail) };
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

/** The `message.received` data of a copy stored for `inbox` (the event carries at most EVENT_LINKS links). */
function receivedData(
  message: PreparedMessage,
  inbox: { id: string; address: string },
  messageId: string,
  now: Date,
): EventDataMap["message.received"] {
  return {
    inboxId: inbox.id,
    messageId,
    from: message.from,
    to: inbox.address,
    subject: message.subject,
    receivedAt: now.toISOString(),
    size: message.raw.byteLength,
    codes: message.codes,
    links: message.links.slice(0, EVENT_LINKS).map((l) => l.url),
  };
}

/** One copy per distinct recipient (any case) of each arrival, in arrival order, with its ids. */
function copiesOf(arrivals: Arrival[], now: Date) {
  return arrivals.map(({ addresses, message }) =>
    [...new Set(addresses.map((address) => address.toLowerCase()))].map((address) => ({
      address,
      message,
      id: newId("msg", now.getTime()),
      attachments: message.attachments.map((a) => ({ id: newId("att", now.getTime()), ...a })),
    }))
  );
}

/** A copy's message row (built before any statement: locks are held only for the statements). */
function messageRow(
  { address, message, id, attachments }: ReturnType<typeof copiesOf>[number][number],
): repo.NewMessage {
  return {
    id,
    address,
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

/** The attachment contents of copies, by message. */
function contentsOf(copies: ReturnType<typeof copiesOf>[number]) {
  return copies.flatMap((c) => c.attachments.map((a) => ({ id: a.id, messageId: c.id, content: a.content })));
}

/**
 * Stores each message for the live inboxes of its recipients and emits one
 * `message.received` per stored copy, all in one transaction (the outbox's):
 * a batch of arrivals (`createReceiver`) or one. Resolves, per arrival, to
 * the copies stored: none for a recipient whose inbox expired or was deleted
 * since the RCPT check.
 */
export async function receiveMessages(deps: InboxDeps, arrivals: Arrival[]): Promise<Stored[][]> {
  const now = deps.clock.now();
  const copies = copiesOf(arrivals, now);
  const all = copies.flat();
  const rows = all.map(messageRow);
  const stored = await deps.outbox.transaction(async (tx, emit) => {
    const inboxes = await repo.storeMessages(tx, rows, contentsOf(all), now, INBOX_CHANNEL);
    const byAddress = new Map(inboxes.map((inbox) => [inbox.address, inbox]));
    // The events, in the order the copies were stored.
    return copies.map((list) =>
      list.flatMap(({ address, message, id }): Stored[] => {
        const inbox = byAddress.get(address);
        if (!inbox) return [];
        void emit(inbox.accountId, "message.received", receivedData(message, inbox, id, now), now);
        return [{ inboxId: inbox.id, messageId: id }];
      })
    );
  });
  for (const inboxId of new Set(stored.flat().map((s) => s.inboxId))) deps.hub.publishLocal(INBOX_CHANNEL, inboxId);
  return stored;
}

/** A live inbox as the RCPT check found it. */
export interface LiveInbox {
  id: string;
  accountId: string;
}

/** What became of one arrival of a batch: the copies stored, or why it could not be stored. */
export type ArrivalOutcome = { stored: Stored[] } | { error: unknown };

/**
 * `receiveMessages` for recipients whose inboxes are known (`inboxes`, by
 * lowercase address, as the RCPT check just found them): messages, events
 * and deliveries in one statement (messages/repo.ts `storeWithEvents`). A
 * recipient with no known inbox is not stored. A copy whose inbox is gone by
 * then is not stored either; if its address is live again under another
 * inbox (deleted and created anew since the RCPT check), the copy goes there
 * through `receiveMessages`.
 *
 * Rejects only when the statement failed, and then nothing was stored. Once
 * it has committed, a failure of that second step is the outcome of the
 * arrivals it concerns alone: they are refused (the sender tries again, and
 * their copies stored already are stored twice, never lost), the others are
 * stored.
 */
export async function receiveKnown(
  deps: InboxDeps,
  arrivals: Arrival[],
  inboxes: ReadonlyMap<string, LiveInbox>,
): Promise<ArrivalOutcome[]> {
  const now = deps.clock.now();
  const copies = copiesOf(arrivals, now).map((list) => list.filter((c) => inboxes.has(c.address)));
  const all = copies.flat();
  if (all.length === 0) return copies.map(() => ({ stored: [] }));
  const rows: repo.NewCopy[] = all.map((copy) => {
    const inbox = inboxes.get(copy.address)!;
    const data = receivedData(copy.message, { id: inbox.id, address: copy.address }, copy.id, now);
    return { ...messageRow(copy), inboxId: inbox.id, event: newEvent("message.received", data, now) };
  });
  const done = await repo.storeWithEvents(
    deps.sql,
    rows,
    contentsOf(all),
    now,
    INBOX_CHANNEL,
    (source) => deps.outbox.inStatement(deps.sql, source, rows.length, now),
  );
  for (const inbox of done.inboxes) deps.hub.publishLocal(INBOX_CHANNEL, inbox.id);
  deps.outbox.committed(new Set(done.inboxes.map((i) => i.accountId)), done.queued);
  const live = new Set(done.inboxes.map((i) => i.id));
  const isStored = (c: { address: string }) => live.has(inboxes.get(c.address)!.id);
  const outcomes: ArrivalOutcome[] = copies.map((list) => ({
    stored: list.filter(isStored).map((c) => ({ inboxId: inboxes.get(c.address)!.id, messageId: c.id })),
  }));
  // Inboxes gone since the RCPT check (expired or deleted, most often): is any of their addresses live again?
  const gone = [...new Set(copies.flat().filter((c) => !isStored(c)).map((c) => c.address))];
  if (gone.length === 0) return outcomes;
  let reborn: Set<string>;
  try {
    reborn = new Set((await liveAddresses(deps.sql, gone, now)).map((l) => l.address));
  } catch (error) {
    return copies.map((list, i) => list.some((c) => !isStored(c)) ? { error } : outcomes[i]!);
  }
  for (const [i, list] of copies.entries()) {
    const addresses = list.filter((c) => !isStored(c) && reborn.has(c.address)).map((c) => c.address);
    if (addresses.length === 0) continue;
    try {
      const [again] = await receiveMessages(deps, [{ ...arrivals[i]!, addresses }]);
      outcomes[i] = { stored: [...(outcomes[i] as { stored: Stored[] }).stored, ...again!] };
    } catch (error) {
      outcomes[i] = { error };
    }
  }
  return outcomes;
}

/** Stores a message for the live inbox of `address` (one transaction); undefined when there is none. */
export async function receiveMessage(
  deps: InboxDeps,
  address: string,
  message: PreparedMessage,
): Promise<Stored | undefined> {
  return (await receiveMessages(deps, [{ addresses: [address], message }]))[0]![0];
}

/** Mail arriving at one instance: the RCPT check and the storing, each batched (`createReceiver`). */
export interface Receiver {
  /** Whether mail for this address (any case) would be accepted now. */
  accepts(address: string): Promise<boolean>;
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
/** RCPT addresses one lookup checks at most. */
const LOOKUP_ADDRESSES = 256;
/**
 * How long an address found live passes RCPT without another query (never
 * past its inbox's expiry). A sender keeps mailing the same inboxes, so most
 * checks cost nothing; an inbox deleted meanwhile may still pass RCPT for
 * this long, and its mail is then refused after DATA (550), never stored: the
 * storing statement checks the inbox again under its lock.
 */
const LIVE_FOR_MS = 1_000;
/** Addresses remembered as live at most (then forgotten all at once). */
const LIVE_REMEMBERED = 10_000;

/**
 * Both steps are batched (shared/batcher.ts): what arrives while a batch is
 * on its way to the database waits and goes in the next one.
 *
 * - RCPT checks: one query for all the addresses asked about meanwhile; an
 *   address found live passes again without one for `LIVE_FOR_MS`, and its
 *   inbox is remembered for storing.
 * - Storing (group commit): one statement for all the arrivals, messages,
 *   events and deliveries (`receiveKnown`), so a busy listener pays one round
 *   trip and the commit's flush once per batch. The sender gets its `250`
 *   only after the commit. A batch that fails is written again one arrival at
 *   a time, each in a transaction (`receiveMessages`), so one message the
 *   database refuses fails alone.
 *
 * A quiet listener sends each one at once.
 */
export function createReceiver(deps: InboxDeps): Receiver {
  /** Address -> its live inbox, and the time (ms) until which it passes RCPT without a query. */
  const knownLive = new Map<string, { until: number; inbox: LiveInbox }>();
  /** Looks up `addresses` (lowercase) and remembers the live ones; returns those. */
  const lookUp = async (addresses: string[]): Promise<Map<string, LiveInbox>> => {
    const now = deps.clock.now().getTime();
    const live = await liveAddresses(deps.sql, [...new Set(addresses)], new Date(now));
    if (knownLive.size + live.length > LIVE_REMEMBERED) knownLive.clear();
    for (const { address, id, accountId, expiresAt } of live) {
      knownLive.set(address, { until: Math.min(now + LIVE_FOR_MS, expiresAt.getTime()), inbox: { id, accountId } });
    }
    return new Map(live.map((l) => [l.address, { id: l.id, accountId: l.accountId }]));
  };
  const lookups = new Batcher<string, boolean>(async (addresses) => {
    const found = await lookUp(addresses);
    return addresses.map((address) => found.has(address));
  }, { maxItems: LOOKUP_ADDRESSES, concurrency: 2 });
  /** The live inboxes of `addresses` (any case): remembered from RCPT, or looked up now in one query. */
  const inboxesOf = async (addresses: string[]): Promise<Map<string, LiveInbox>> => {
    const now = deps.clock.now().getTime();
    const inboxes = new Map<string, LiveInbox>();
    const unknown: string[] = [];
    for (const address of new Set(addresses.map((a) => a.toLowerCase()))) {
      const known = knownLive.get(address);
      if (known && known.until > now) inboxes.set(address, known.inbox);
      else unknown.push(address);
    }
    if (unknown.length > 0) { for (const [address, inbox] of await lookUp(unknown)) inboxes.set(address, inbox); }
    return inboxes;
  };

  const batches = new Batcher<Arrival, ArrivalOutcome>(async (arrivals) => {
    try {
      return await receiveKnown(deps, arrivals, await inboxesOf(arrivals.flatMap((a) => a.addresses)));
    } catch (error) {
      // Nothing of the batch was stored. Again one arrival at a time, each in a transaction of its own: the one
      // the database refuses fails alone.
      log.warn("Storing {count} messages in one statement failed; storing them one by one: {error}", {
        count: arrivals.length,
        error: String(error),
      });
      const outcomes: ArrivalOutcome[] = [];
      for (const arrival of arrivals) {
        outcomes.push(
          await receiveMessages(deps, [arrival]).then(([stored]) => ({ stored: stored! }), (error) => ({ error })),
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
    accepts(address) {
      const normalized = address.toLowerCase();
      const at = normalized.lastIndexOf("@");
      if (at <= 0 || normalized.slice(at + 1) !== deps.config.mailDomain) return Promise.resolve(false);
      if ((knownLive.get(normalized)?.until ?? 0) > deps.clock.now().getTime()) return Promise.resolve(true);
      return lookups.submit(normalized);
    },
    async receive(arrival) {
      const outcome = await batches.submit(arrival);
      if ("error" in outcome) throw outcome.error;
      return outcome.stored;
    },
  };
}
