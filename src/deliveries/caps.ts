/**
 * The caps on exchanges under way: per event (spec 6.3: 3), per webhook and
 * per account, counted over one instance's exchanges (one instance at a time
 * holds an account, so they hold over all instances). The queue holds its
 * exchanges to them (`queue.ts` `#startReady`), and a claim's reserve to
 * RESERVE times them (`fitCaps`, through `repo.claim`).
 */

/** How many attempts may be exchanged at once, over all instances (one at a time holds an account). */
export interface Caps {
  /** Of one event (spec 6.3: 3). */
  perEvent: number;
  /** To one webhook: a hanging receiver cannot take every slot. */
  perWebhook: number;
  /** Of one account, at most, whatever its share. */
  perAccount: number;
  /**
   * The slots shared between accounts (one instance's concurrency). An account
   * may hold at most half of what the instance's other accounts leave of them:
   * alone it gets half, a second hanging tenant a quarter, a third an eighth,
   * so a newcomer always finds free slots; as attempts finish, the shares even
   * out to slots / (k + 1) for k accounts. Never less than 1.
   */
  slots: number;
}

/** An exchange under way, as the caps count it: of one event, to one webhook, of one account. */
export interface Exchange {
  eventId: string;
  webhookId: string;
  accountId: string;
}

/** Exchanges counted per event, webhook and account. */
export class CapCount {
  readonly #events = new Map<string, number>();
  readonly #webhooks = new Map<string, number>();
  readonly #accounts = new Map<string, number>();
  #total = 0;

  constructor(exchanges: Iterable<Exchange> = []) {
    for (const d of exchanges) this.add(d);
  }

  add(d: Exchange): void {
    bump(this.#events, d.eventId, 1);
    bump(this.#webhooks, d.webhookId, 1);
    bump(this.#accounts, d.accountId, 1);
    this.#total++;
  }

  /** Takes back an `add` of `d`. */
  remove(d: Exchange): void {
    bump(this.#events, d.eventId, -1);
    bump(this.#webhooks, d.webhookId, -1);
    bump(this.#accounts, d.accountId, -1);
    this.#total--;
  }

  /** How many of `accountId`'s are counted. */
  account(accountId: string): number {
    return this.#accounts.get(accountId) ?? 0;
  }

  /** Whether one more exchange of `d`'s event and to its webhook stays within `caps`. */
  eventAndWebhookFit(d: Exchange, caps: Caps): boolean {
    return (this.#events.get(d.eventId) ?? 0) < caps.perEvent &&
      (this.#webhooks.get(d.webhookId) ?? 0) < caps.perWebhook;
  }

  /**
   * How many exchanges `accountId` may have (`Caps.slots`): half of what the
   * other accounts leave of the slots when `among` is 1, divided among
   * `among` accounts and one more in general; never more than `perAccount`,
   * never less than 1.
   */
  share(accountId: string, among: number, caps: Caps): number {
    const others = this.#total - this.account(accountId);
    return Math.min(caps.perAccount, Math.max(1, Math.floor((caps.slots - others) / (among + 1))));
  }
}

/** Adds `by` to `key`'s count, forgetting a key counted down to 0 (the maps hold only what is under way). */
function bump(counts: Map<string, number>, key: string, by: number): void {
  const n = (counts.get(key) ?? 0) + by;
  if (n > 0) counts.set(key, n);
  else counts.delete(key);
}

/**
 * Those of a claim's `rows` (oldest first) that fit every cap, counted over
 * `flying` and the rows taken before them, in their order: an account's
 * share is counted once, from `flying`, divided among the accounts of the
 * rows and one more, as it was when the claim's SQL counted it. A row that
 * does not fit is left, pending, for a later claim.
 */
export function fitCaps<T extends Exchange>(rows: readonly T[], flying: Iterable<Exchange>, caps: Caps): T[] {
  const count = new CapCount(flying);
  const accounts = new Set(rows.map((r) => r.accountId));
  const shares = new Map([...accounts].map((a) => [a, count.share(a, accounts.size, caps)]));
  const fit: T[] = [];
  for (const r of rows) {
    if (count.account(r.accountId) >= shares.get(r.accountId)! || !count.eventAndWebhookFit(r, caps)) continue;
    count.add(r);
    fit.push(r);
  }
  return fit;
}
