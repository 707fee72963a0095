/**
 * The expiry sweep: removes expired inboxes with their messages and emits
 * `inbox.expired` for each, exactly once even with every instance sweeping
 * at the same minute. Each batch is claimed with FOR UPDATE SKIP LOCKED and
 * deleted in the claiming transaction, so a row is either another sweeper's
 * (skipped) or gone (not found again).
 */
import * as repo from "./repo.ts";
import { emitExpired, type InboxDeps } from "./service.ts";

/** Inboxes claimed per transaction: bounded lock time and transaction size. */
export const EXPIRY_BATCH_SIZE = 100;

/** Expires every inbox due at `now`; returns how many this call expired. */
export async function sweepExpiredInboxes(
  deps: Pick<InboxDeps, "outbox">,
  now: Date,
  batchSize: number = EXPIRY_BATCH_SIZE,
): Promise<number> {
  let total = 0;
  while (true) {
    const batch = await deps.outbox.transaction(async (tx, emit) => {
      const claimed = await repo.claimExpiredInboxes(tx, now, batchSize);
      if (claimed.length === 0) return { claimed: 0, expired: 0 };
      // Events follow what this transaction deleted, not what it selected: a
      // row is announced by the one transaction that removed it.
      const deleted = await repo.deleteInboxes(tx, claimed.map((i) => i.id));
      for (const inbox of deleted) await emitExpired(emit, inbox, now);
      return { claimed: claimed.length, expired: deleted.length };
    });
    total += batch.expired;
    // A short batch means nothing due is left, or what is left is being
    // expired by another sweeper right now.
    if (batch.claimed < batchSize) return total;
  }
}
