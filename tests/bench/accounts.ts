/** The account every delivery and API scenario sends from. */
import { type Api, createWebhook, newApiKey, newOperatorAccount } from "../_helpers/app.ts";

/** The secret of every bench webhook: each delivery is signed, as a subscriber's would be. */
export const BENCH_SECRET = "bench-secret-0123456789";

/** An account made through `api`: its id, its API key and its webhooks' ids. */
export interface BenchAccount {
  id: string;
  key: string;
  webhooks: string[];
}

/**
 * A business account (the operator API), its API key, and `webhooks`
 * webhooks subscribed to `inbox.created` at `url("/h<i>")`, signed with
 * BENCH_SECRET.
 */
export async function webhookAccount(
  api: Api,
  webhooks: number,
  url: (path: string) => string,
): Promise<BenchAccount> {
  const acc = await newOperatorAccount(api, "business");
  const { key } = await newApiKey(api, acc, "bench");
  const ids: string[] = [];
  for (let i = 0; i < webhooks; i++) {
    ids.push(await createWebhook(api, acc, url(`/h${i}`), ["inbox.created"], BENCH_SECRET));
  }
  return { id: acc.id, key, webhooks: ids };
}

/** One such account for each of `fanouts`, that many webhooks each: their ids by their number of webhooks. */
export async function webhookAccounts(
  api: Api,
  fanouts: number[],
  url: (path: string) => string,
): Promise<Map<number, string>> {
  const accounts = new Map<number, string>();
  for (const fanout of fanouts) accounts.set(fanout, (await webhookAccount(api, fanout, url)).id);
  return accounts;
}
