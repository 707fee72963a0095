/** The minute-level housekeeping every instance runs from Deno.cron. */
import { getLogger } from "@logtape/logtape";
import type { AppDeps } from "../deps.ts";
import { purgeExpiredSessions } from "../auth/repo.ts";
import { purgeHits } from "../rate_limit/repo.ts";

const log = getLogger(["inbox", "sweeps"]);

/** The longest window any rate policy uses; older hits can go. */
const LONGEST_RATE_WINDOW_MS = 3_600_000;

/** Runs each sweep; one failing does not stop the others. */
export async function runSweeps(deps: Pick<AppDeps, "sql" | "clock">): Promise<void> {
  const now = deps.clock.now();
  const sweeps: Array<[string, () => Promise<number>]> = [
    ["expired sessions", () => purgeExpiredSessions(deps.sql, now)],
    ["rate-limit hits", () => purgeHits(deps.sql, new Date(now.getTime() - LONGEST_RATE_WINDOW_MS))],
  ];
  for (const [name, sweep] of sweeps) {
    try {
      const removed = await sweep();
      if (removed > 0) log.debug("Swept {removed} {name}", { removed, name });
    } catch (err) {
      log.warn("Sweep of {name} failed: {error}", { name, error: String(err) });
    }
  }
}
