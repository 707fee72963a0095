/**
 * What attempts finished since the last VACUUM cost a claim, from the start
 * of the due order and from the floor the queue passes (`repo.DueFloor`):
 *
 *   deno run -A --lock=deno.dev.lock tests/bench/claim_floor.ts [finished]
 *
 * One account, 3 webhooks, 600 attempts due. Then `finished` attempts
 * (default 200,000) that were pending before them (older run_at, the head of
 * the due order) are set succeeded, as sent attempts are, with no VACUUM
 * since: each leaves a dead entry in the partial indexes of pending attempts.
 * Printed: the median of 30 claims of 48 (each rolled back, as
 * `claim_cost.ts` runs them) before, then from the start and from the floor
 * (the previous claim's, less the queue's margin of 5 s), then after a VACUUM;
 * and the first claim of each, which reads the dead rows' heap to find them
 * dead.
 */
import { createWebhook } from "../_helpers/app.ts";
import { deliveryFixture } from "../deliveries/_support.ts";
import { commitInboxEvents } from "../_helpers/events.ts";
import * as repo from "../../src/deliveries/repo.ts";
import { median } from "./stats.ts";

const finished = Number(Deno.args[0] ?? 200_000);
/** The reserve caps of the queue (RESERVE times the default caps of one account). */
const CAPS = { perEvent: 12, perWebhook: 64, perAccount: 128, slots: 256 };
const MARGIN_MS = 5_000;

const f = await deliveryFixture();
try {
  const hooks: string[] = [];
  for (let i = 0; i < 3; i++) hooks.push(await createWebhook(f.app, f.user, f.receiver.url(`/h${i}`)));
  await commitInboxEvents(f.db.sql, f.user.id, 200, 100, new Date(Date.now() - 1_000));
  const conn = await f.db.sql.reserve();

  /** 30 claims of 48, each rolled back; `fromFloor`: each from the floor the one before gave. */
  const claims = async (label: string, fromFloor: boolean) => {
    const times: number[] = [];
    let floor: repo.DueFloor | undefined;
    for (let i = 0; i < 30; i++) {
      await conn`BEGIN`;
      const now = new Date();
      const from = fromFloor && floor ? { runAt: new Date(floor.runAt.getTime() - MARGIN_MS), id: "" } : undefined;
      const started = performance.now();
      const claim = await repo.claim(conn, now, 48, CAPS, "bench", new Date(now.getTime() + 60_000), [], [], from);
      times.push(performance.now() - started);
      floor = claim.floor;
      await conn`ROLLBACK`;
      if (claim.claimed.length !== 48) throw new Error(`${label}: claimed ${claim.claimed.length}, not 48`);
    }
    console.log(`| ${label} | ${median(times).toFixed(2)} | ${times[0]!.toFixed(2)} |`);
  };

  console.log(`claim of 48 of 600 due, ${finished.toLocaleString("en")} finished since the last VACUUM (ms)`);
  console.log("| claims | median of 30 | first |");
  console.log("|---|---|---|");
  await claims("none finished yet", false);
  const [event] = await f.db.sql<{ id: string }[]>`SELECT id FROM events LIMIT 1`;
  await f.db.sql`
    INSERT INTO deliveries (id, event_id, webhook_id, attempt, status, run_at, created_at)
    SELECT 'dlv_old' || lpad(g::text, 9, '0'), ${event!.id}, ${hooks[0]!}, 1, 'pending',
      now() - interval '2 hours' + g * interval '1 ms', now()
    FROM generate_series(1, ${finished}) g`;
  await f.db.sql`VACUUM deliveries`;
  await f.db.sql`UPDATE deliveries SET status = 'succeeded', finished_at = now() WHERE id LIKE 'dlv_old%'`;
  await claims("from the start of the due order", false);
  await claims("from the floor", true);
  await f.db.sql`VACUUM deliveries`;
  await claims("after a VACUUM, from the start", false);
  conn.release();
} finally {
  await f.close();
}
