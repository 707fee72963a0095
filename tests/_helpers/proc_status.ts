/** A process's memory as Linux reports it in /proc/<pid>/status. */

/** VmRSS (resident now) or VmHWM (the most it was resident), in kB; 0 once the process is gone. */
export function statusKb(pid: number, field: "VmRSS" | "VmHWM"): number {
  try {
    const status = Deno.readTextFileSync(`/proc/${pid}/status`);
    return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return 0;
    throw err;
  }
}
