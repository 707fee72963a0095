/**
 * The delivery engine before its slots were freed at the exchange's end, for
 * the "before" rows of the deliveries and latency scenarios: the service of
 * the tree at BEFORE_ENGINE, where each slot held its attempt until the
 * result committed, on a schema of its own that the tree migrates, with
 * accounts whose webhooks point at the receiver. Its events go in through
 * the tree's own outbox (`tests/_helpers/events.ts` of that tree), as in
 * latency_ab.ts. The service runs only for its own measurements: idle, it
 * would wake at every event the others commit (the NOTIFY channel is the
 * database's) and claim in its schema.
 */
import { createTestDb, type TestDb } from "../_helpers/db.ts";
import type { commitInboxEvents } from "../_helpers/events.ts";
import { serviceEnv } from "../_helpers/process.ts";
import { apiAt } from "../_helpers/app.ts";
import { webhookAccounts } from "./accounts.ts";
import { startTree, treeAt, type TreeService } from "./trees.ts";

/** The last commit before a slot was free once its exchange ended (1d6bd0c and the engine work after it). */
export const BEFORE_ENGINE = "01b7ea5";

/** The tree's schema, its accounts by their number of webhooks, and its way to commit events. */
export interface BeforeEngine {
  db: TestDb;
  accounts: Map<number, string>;
  emit: typeof commitInboxEvents;
  /** Runs `fn` while the tree's service runs, started for it and stopped after. */
  running<T>(fn: () => Promise<T>): Promise<T>;
}

/** Sets up the tree at BEFORE_ENGINE with one account for each of `fanouts`, at `webhookUrl(/h<i>)`. */
export async function beforeEngine(webhookUrl: (path: string) => string, fanouts: number[]): Promise<BeforeEngine> {
  const root = await treeAt(BEFORE_ENGINE);
  const db = await createTestDb({ migrated: false });
  const start = () => startTree(root, serviceEnv(db), { name: `the service at ${BEFORE_ENGINE}` });
  const running = async <T>(fn: (service: TreeService) => Promise<T>): Promise<T> => {
    const service = await start();
    try {
      return await fn(service);
    } finally {
      await service.stop("SIGTERM");
    }
  };
  const accounts = await running((service) => webhookAccounts(apiAt(service.url), fanouts, webhookUrl));
  const { commitInboxEvents: emit } = await import(new URL("tests/_helpers/events.ts", root).href);
  return { db, accounts, emit, running };
}
