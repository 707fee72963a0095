/**
 * Where one delivery's time goes, read from the service's own histograms in
 * /metrics (delivery_stage_duration_seconds, delivery_claimed_total): two
 * readings around a drain make its stage table. And the time PostgreSQL
 * spent in the claim and record functions, from pg_stat_user_functions.
 */
import type { TestDb } from "../_helpers/db.ts";

/** The sums and counts of the service's delivery stage histograms. */
export async function stageMetrics(url: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^delivery_stage_duration_seconds_(sum|count)\{stage="(\w+)"\} (\S+)$/gm)) {
    out[`${m[2]}_${m[1]}`] = Number(m[3]);
  }
  out.claimed = Number(/^delivery_claimed_total (\S+)$/m.exec(text)?.[1] ?? 0);
  return out;
}

/** The stage table of a window between two readings of `stageMetrics`, `seconds` long. */
export function stageTable(a: Record<string, number>, b: Record<string, number>, seconds: number) {
  const d = (k: string) => (b[k] ?? 0) - (a[k] ?? 0);
  const mean = (stage: string) => d(`${stage}_count`) > 0 ? d(`${stage}_sum`) / d(`${stage}_count`) : NaN;
  const r2 = (n: number) => Math.round(n * 100) / 100;
  return {
    exchangeMs: r2(mean("exchange") * 1000),
    recordMs: r2(mean("record") * 1000),
    claimMs: r2(mean("claim") * 1000),
    rowsPerClaim: r2(d("claimed") / d("claim_count")),
    busySlots: r2(d("exchange_sum") / seconds),
  };
}

/** A service's environment with its stored functions' calls and time counted (pg_stat_user_functions). */
export function withFunctionStats(env: Record<string, string>): Record<string, string> {
  return { ...env, DATABASE_URL: `${env.DATABASE_URL}&track_functions=pl` };
}

/** Calls and total ms of the claim ("claim") and record ("record") functions in the schema, so far. */
export async function functionStats(db: TestDb): Promise<Record<string, { calls: number; ms: number }>> {
  const rows = await db.sql<{ funcname: string; calls: number; ms: number }[]>`
    SELECT funcname, calls::int, total_time AS ms FROM pg_stat_user_functions WHERE schemaname = ${db.schema}`;
  const out: Record<string, { calls: number; ms: number }> = {};
  for (const r of rows) {
    const key = r.funcname.startsWith("deliveries_claim") || r.funcname.startsWith("deliveries_reserve")
      ? "claim"
      : r.funcname === "deliveries_record_results"
      ? "record"
      : undefined;
    if (key === undefined) continue;
    // The previous names call the new ones: count the outermost once.
    if (!out[key] || r.ms > out[key]!.ms) out[key] = { calls: r.calls, ms: r.ms };
  }
  return out;
}

/** The calls of `key` between two readings of `functionStats`, and their mean ms in PostgreSQL. */
export function functionCalls(
  a: Record<string, { calls: number; ms: number }>,
  b: Record<string, { calls: number; ms: number }>,
  key: "claim" | "record",
): { calls: number; ms: number } {
  const calls = (b[key]?.calls ?? 0) - (a[key]?.calls ?? 0);
  return { calls, ms: calls > 0 ? ((b[key]?.ms ?? 0) - (a[key]?.ms ?? 0)) / calls : NaN };
}
