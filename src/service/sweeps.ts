/**
 * The minute-level housekeeping every instance runs from Deno.cron. Each
 * sweep belongs to its feature (expired inboxes, leases, the delivery log,
 * sessions, the rate log); this only runs them in turn, so that one failing
 * does not stop the others.
 */
import { getLogger } from "@logtape/logtape";

const log = getLogger(["inbox", "sweeps"]);

/** A named sweep: removes or requeues what is due at `now`, returns how many rows it touched. */
export interface Sweep {
  name: string;
  run(now: Date): Promise<number>;
}

/** Runs each sweep once. */
export async function runSweeps(sweeps: readonly Sweep[], now: Date): Promise<void> {
  for (const sweep of sweeps) {
    try {
      const count = await sweep.run(now);
      if (count > 0) log.info("Sweep of {name}: {count}", { name: sweep.name, count });
    } catch (err) {
      log.warn("Sweep of {name} failed: {error}", { name: sweep.name, error: String(err) });
    }
  }
}
