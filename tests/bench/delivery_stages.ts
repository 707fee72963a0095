/**
 * Where one delivery's time goes, read from the service's own histograms in
 * /metrics (delivery_stage_duration_seconds, delivery_claimed_total): two
 * readings around a drain make its stage table.
 */

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
