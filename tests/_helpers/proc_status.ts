/** A process as Linux reports it in /proc: its memory (/proc/<pid>/status) and the processes it started. */

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

/** The processes `pid` started (its threads' children), none once it is gone. */
export function childPids(pid: number): number[] {
  const out: number[] = [];
  try {
    for (const task of Deno.readDirSync(`/proc/${pid}/task`)) {
      const children = Deno.readTextFileSync(`/proc/${pid}/task/${task.name}/children`).trim();
      if (children !== "") out.push(...children.split(/\s+/).map(Number));
    }
  } catch {
    // Gone meanwhile (ENOENT or ESRCH, whichever /proc answers).
  }
  return out;
}
