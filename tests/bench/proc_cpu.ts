/** CPU time of processes as Linux reports it in /proc: one copy for run.ts, api_bench.ts and drain_ab.ts. */

/** Clock ticks per second of /proc's CPU times. */
export const CLK_TCK = Number(
  new TextDecoder().decode(new Deno.Command("getconf", { args: ["CLK_TCK"], stdout: "piped" }).outputSync().stdout),
) || 100;

/** A process's name and CPU time so far (utime + stime of all its threads, in ticks), or undefined once it is gone. */
export function procCpu(pid: number | string): { comm: string; ticks: number } | undefined {
  let stat: string;
  try {
    stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  } catch {
    return undefined;
  }
  // The name is in parentheses and may hold spaces; utime and stime are fields 14 and 15.
  const close = stat.lastIndexOf(")");
  const fields = stat.slice(close + 2).split(" ");
  return { comm: stat.slice(stat.indexOf("(") + 1, close), ticks: Number(fields[11]) + Number(fields[12]) };
}

/** The CPU ticks of every postgres process now, by pid (the server is shared: other sessions' backends count too). */
export function postgresTicks(): Map<string, number> {
  const out = new Map<string, number>();
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    const p = procCpu(entry.name);
    if (p?.comm === "postgres") out.set(entry.name, p.ticks);
  }
  return out;
}

/**
 * Ticks used between two `postgresTicks` samples, per process: a backend
 * that starts between them counts whole, one that ends loses only its last
 * interval.
 */
export function postgresTicksUsed(before: Map<string, number>, after: Map<string, number>): number {
  let used = 0;
  for (const [pid, ticks] of after) used += ticks - (before.get(pid) ?? 0);
  return used;
}

/** The machine's CPU ticks so far (/proc/stat, all cores): busy (neither idle nor waiting for I/O) and in all. */
export function machineTicks(): { busy: number; total: number } {
  const line = Deno.readTextFileSync("/proc/stat").split("\n")[0]!;
  // cpu user nice system idle iowait irq softirq steal ...
  const t = line.trim().split(/\s+/).slice(1).map(Number);
  const total = t.reduce((a, b) => a + b, 0);
  return { busy: total - t[3]! - t[4]!, total };
}
