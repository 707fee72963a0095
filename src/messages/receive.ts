/**
 * Mail arriving over SMTP: the RCPT check, and storing parsed messages for
 * live inboxes (raw bytes, attachment contents, codes and links) with their
 * `message.received` events, in one transaction per batch of arrivals. On
 * commit, the waiters of the inboxes are woken here and, through NOTIFY, on
 * every other instance.
 */
import { liveAddresses } from "../inboxes/repo.ts";
import { INBOX_CHANNEL, type InboxDeps } from "../inboxes/service.ts";
import { Batcher } from "../shared/batcher.ts";
import { newId } from "../shared/ids.ts";
import { extractCodes, extractLinks } from "./extract.ts";
import * as repo from "./repo.ts";
import type { Link } from "./schemas.ts";

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

/**
 * Stores each message for the live inboxes of its recipients and emits one
 * `message.received` per stored copy, all in one transaction (the outbox's):
 * a batch of arrivals (`createReceiver`) or one. Resolves, per arrival, to
 * the copies stored: none for a recipient whose inbox expired or was deleted
 * since the RCPT check.
 */
export async function receiveMessages(deps: InboxDeps, arrivals: Arrival[]): Promise<Stored[][]> {
  const now = deps.clock.now();
  // One copy per distinct recipient of each arrival, in arrival order.
  const copies = arrivals.map(({ addresses, message }) =>
    [...new Set(addresses.map((address) => address.toLowerCase()))].map((address) => ({
      address,
      message,
      id: newId("msg", now.getTime()),
      attachments: message.attachments.map((a) => ({ id: newId("att", now.getTime()), ...a })),
    }))
  );
  // The rows are built before the transaction: it holds the inboxes' locks only for the statements.
  const all = copies.flat();
  const rows: repo.NewMessage[] = all.map(({ address, message, id, attachments }) => ({
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
  }));
  const contents = all.flatMap((c) => c.attachments.map((a) => ({ id: a.id, messageId: c.id, content: a.content })));
  const stored = await deps.outbox.transaction(async (tx, emit) => {
    const inboxes = await repo.storeMessages(tx, rows, contents, now, INBOX_CHANNEL);
    const byAddress = new Map(inboxes.map((inbox) => [inbox.address, inbox]));
    // The events, in the order the copies were stored.
    return copies.map((list) =>
      list.flatMap(({ address, message, id }): Stored[] => {
        const inbox = byAddress.get(address);
        if (!inbox) return [];
        void emit(inbox.accountId, "message.received", {
          inboxId: inbox.id,
          messageId: id,
          from: message.from,
          to: inbox.address,
          subject: message.subject,
          receivedAt: now.toISOString(),
          size: message.raw.byteLength,
          codes: message.codes,
          links: message.links.slice(0, EVENT_LINKS).map((l) => l.url),
        }, now);
        return [{ inboxId: inbox.id, messageId: id }];
      })
    );
  });
  for (const inboxId of new Set(stored.flat().map((s) => s.inboxId))) deps.hub.publishLocal(INBOX_CHANNEL, inboxId);
  return stored;
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
 *   address found live passes again without one for `LIVE_FOR_MS`.
 * - Storing (group commit): one transaction for all the arrivals, so a busy
 *   listener pays the round trips and the commit's flush once per batch. The
 *   sender gets its `250` only after the commit. A batch that fails is
 *   written again one arrival at a time, so one message the database refuses
 *   fails alone.
 *
 * A quiet listener sends each one at once.
 */
export function createReceiver(deps: InboxDeps): Receiver {
  /** Address -> the time (ms) until which it passes RCPT without a query. */
  const knownLive = new Map<string, number>();
  const lookups = new Batcher<string, boolean>(async (addresses) => {
    const now = deps.clock.now().getTime();
    const live = await liveAddresses(deps.sql, [...new Set(addresses)], new Date(now));
    if (knownLive.size + live.length > LIVE_REMEMBERED) knownLive.clear();
    for (const { address, expiresAt } of live) knownLive.set(address, Math.min(now + LIVE_FOR_MS, expiresAt.getTime()));
    const found = new Set(live.map((l) => l.address));
    return addresses.map((address) => found.has(address));
  }, { maxItems: LOOKUP_ADDRESSES, concurrency: 2 });

  type Outcome = { stored: Stored[] } | { error: unknown };
  const batches = new Batcher<Arrival, Outcome>(async (arrivals) => {
    try {
      return (await receiveMessages(deps, arrivals)).map((stored) => ({ stored }));
    } catch (error) {
      if (arrivals.length === 1) return [{ error }];
      const outcomes: Outcome[] = [];
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
      if ((knownLive.get(normalized) ?? 0) > deps.clock.now().getTime()) return Promise.resolve(true);
      return lookups.submit(normalized);
    },
    async receive(arrival) {
      const outcome = await batches.submit(arrival);
      if ("error" in outcome) throw outcome.error;
      return outcome.stored;
    },
  };
}
