/**
 * What one claim costs, by the rows it takes, this tree's `deliveries_reserve`
 * against a variant of `src/deliveries/sql/claim.sql`, side by side in one
 * run:
 *
 *   deno run -A --lock=deno.dev.lock tests/bench/claim_cost.ts [--without=<line>] [--webhooks=<n>]
 *
 * Two schemas get the same backlog (2,000 events to `--webhooks` webhooks of
 * one account, default 3, all due); the second runs claim.sql with every line
 * equal to `--without` removed (default: `SET plan_cache_mode =
 * force_generic_plan`, so the variant plans its statements at every call as
 * PostgreSQL chooses by default). Each claim runs in a transaction that is
 * rolled back, so every one finds the same backlog; the two alternate, on a
 * connection each (plans are cached per connection), 200 times per size.
 * Printed: the median time of the call, as the client sees it, per size.
 */
import { createWebhook } from "../_helpers/app.ts";
import { type DeliveryFixture, deliveryFixture } from "../deliveries/_support.ts";
import { commitInboxEvents } from "../_helpers/events.ts";
import { median } from "./stats.ts";

const without = Deno.args.find((a) => a.startsWith("--without="))?.slice("--without=".length) ??
  "SET plan_cache_mode = force_generic_plan";
const webhooks = Number(Deno.args.find((a) => a.startsWith("--webhooks="))?.slice("--webhooks=".length) ?? 3);
const EVENTS = 2_000;
const ROUNDS = 200;
const LIMITS = [1, 6, 12, 24, 48];
/** The reserve caps of the queue (RESERVE times the default caps of one account). */
const CAPS = { perEvent: 6, perWebhook: 32, perAccount: 64, slots: 64 };

const claimSql = await Deno.readTextFile(new URL("../../src/deliveries/sql/claim.sql", import.meta.url));
const lines = claimSql.split("\n");
const variantSql = lines.filter((l) => l.trim() !== without.trim()).join("\n");
if (variantSql === claimSql) throw new Error(`claim.sql has no line "${without}"`);

/** A schema with one account, its webhooks and a due backlog (the deliveries tests' fixture). */
async function backlog(variant: boolean): Promise<DeliveryFixture> {
  const f = await deliveryFixture();
  if (variant) await f.db.sql.unsafe(variantSql);
  for (let i = 0; i < webhooks; i++) await createWebhook(f.app, f.user, f.receiver.url(`/h${i}`));
  await commitInboxEvents(f.db.sql, f.user.id, EVENTS, 100, new Date(Date.now() - 1_000));
  await f.db.sql`ANALYZE deliveries`;
  return f;
}

const schemas = [await backlog(false), await backlog(true)];
const names = ["this tree", `without "${without}"`];
try {
  const conns = await Promise.all(schemas.map((s) => s.db.sql.reserve()));
  console.log(`claim of up to N rows, ${EVENTS} events x ${webhooks} webhooks due, median of ${ROUNDS} (ms)`);
  console.log(`| N | rows | ${names.join(" | ")} | ratio |`);
  console.log("|---|---|---|---|---|");
  for (const limit of LIMITS) {
    const times: number[][] = [[], []];
    let rows = 0;
    for (let i = 0; i < ROUNDS; i++) {
      for (const [k, c] of conns.entries()) {
        await c`BEGIN`;
        const now = new Date();
        const lease = new Date(now.getTime() + 60_000);
        const started = performance.now();
        const got = await c`
          SELECT id FROM deliveries_reserve(${now}, ${limit}, ${CAPS.perEvent}, ${CAPS.perWebhook}, ${CAPS.perAccount},
            ${CAPS.slots}, 'bench', ${lease}, 512, '{}'::text[], '{}'::text[], '{}'::text[], '{}'::text[])`;
        times[k]!.push(performance.now() - started);
        rows = got.filter((r) => r.id !== null).length;
        await c`ROLLBACK`;
      }
    }
    const [a, b] = times.map(median) as [number, number];
    console.log(`| ${limit} | ${rows} | ${a.toFixed(2)} | ${b.toFixed(2)} | ${(a / b).toFixed(2)} |`);
  }
  for (const c of conns) c.release();
} finally {
  for (const f of schemas) await f.close();
}
