/**
 * What a credential reaches: one account's inboxes, all of them (a session,
 * an unrestricted key) or only some (a key made with `inboxIds`). An inbox
 * out of reach is answered exactly as an unknown one: 404, on every path.
 */

/** The account and the inboxes a request may see. */
export interface Reach {
  accountId: string;
  /** Null: every inbox of the account. */
  inboxIds: readonly string[] | null;
}

/** Whether `inboxId` is within reach (the account's ownership is checked where the inbox is read). */
export function reaches(reach: Reach, inboxId: string): boolean {
  return reach.inboxIds === null || reach.inboxIds.includes(inboxId);
}
