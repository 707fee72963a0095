/**
 * Which addresses are those of live inboxes, as SMTP asks at RCPT and again
 * when it stores a batch: one query for all the addresses asked about while
 * the previous lookup was on its way (shared/batcher.ts), and an address
 * found live passes again without a query for `LIVE_FOR_MS`, with its inbox
 * remembered for storing.
 *
 * A sender keeps mailing the same inboxes, so most checks cost nothing. An
 * inbox deleted meanwhile may still pass RCPT for that long; its mail is then
 * refused after DATA (550), never stored: the storing statement checks the
 * inbox again under its lock.
 */
import type { Sql } from "../db/client.ts";
import type { Clock } from "../shared/clock.ts";
import { Batcher } from "../shared/batcher.ts";
import { liveAddresses } from "./repo.ts";

/** A live inbox as a lookup found it. */
export interface LiveInbox {
  id: string;
  accountId: string;
}

/** How long an address found live passes RCPT without another query (never past its inbox's expiry). */
const LIVE_FOR_MS = 1_000;
/** Addresses remembered as live at most (then forgotten all at once). */
const LIVE_REMEMBERED = 10_000;
/** Addresses one lookup checks at most. */
const LOOKUP_ADDRESSES = 256;

/** The live addresses of this instance's SMTP listener. */
export class LiveAddresses {
  /** Address -> its live inbox, and the time (ms) until which it passes without a query. */
  readonly #known = new Map<string, { until: number; inbox: LiveInbox }>();
  readonly #lookups: Batcher<string, LiveInbox | undefined>;

  constructor(private readonly deps: { sql: Sql; clock: Clock }) {
    this.#lookups = new Batcher<string, LiveInbox | undefined>(async (addresses) => {
      const found = await this.lookUp(addresses);
      return addresses.map((address) => found.get(address));
    }, { maxItems: LOOKUP_ADDRESSES, concurrency: 2 });
  }

  /** The live inbox of `address` (lowercase): remembered, or looked up with the others asked meanwhile. */
  async inboxOf(address: string): Promise<LiveInbox | undefined> {
    const known = this.#known.get(address);
    if (known && known.until > this.deps.clock.now().getTime()) return known.inbox;
    return await this.#lookups.submit(address);
  }

  /** The live inboxes of `addresses` (lowercase): those remembered, and the others looked up now in one query. */
  async inboxesOf(addresses: Iterable<string>): Promise<Map<string, LiveInbox>> {
    const now = this.deps.clock.now().getTime();
    const inboxes = new Map<string, LiveInbox>();
    const unknown: string[] = [];
    for (const address of new Set(addresses)) {
      const known = this.#known.get(address);
      if (known && known.until > now) inboxes.set(address, known.inbox);
      else unknown.push(address);
    }
    if (unknown.length > 0) { for (const [address, inbox] of await this.lookUp(unknown)) inboxes.set(address, inbox); }
    return inboxes;
  }

  /** Looks `addresses` (lowercase) up now and remembers the live ones; returns those. */
  async lookUp(addresses: string[]): Promise<Map<string, LiveInbox>> {
    const now = this.deps.clock.now().getTime();
    const live = await liveAddresses(this.deps.sql, [...new Set(addresses)], new Date(now));
    if (this.#known.size + live.length > LIVE_REMEMBERED) this.#known.clear();
    for (const { address, id, accountId, expiresAt } of live) {
      this.#known.set(address, { until: Math.min(now + LIVE_FOR_MS, expiresAt.getTime()), inbox: { id, accountId } });
    }
    return new Map(live.map((l) => [l.address, { id: l.id, accountId: l.accountId }]));
  }
}
