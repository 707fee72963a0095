/**
 * Measures what requests with invented methods cost the service process:
 * RSS (from /proc) and the size of /metrics before and after a burst of
 * `JUNK_REQUESTS` (default 20,000) requests, each with a method and a path
 * never seen before. Not a test (no assertion): the figures for a report.
 *
 *   deno run -A tests/hardening/junk_methods_memory.ts
 */
import { createTestDb } from "../_helpers/db.ts";
import { serviceEnv, startService } from "../_helpers/process.ts";
import { rawBurst } from "./raw_http.ts";

const COUNT = Number(Deno.env.get("JUNK_REQUESTS") ?? 20_000);
const CONCURRENCY = 16;

function rssMiB(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  const kib = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1]);
  return Math.round(kib / 102.4) / 10;
}

async function sample(url: string, pid: number) {
  const text = await (await fetch(`${url}/metrics`)).text();
  const series = text.split("\n").filter((l) => l !== "" && !l.startsWith("#")).length;
  return { rssMiB: rssMiB(pid), metricsBytes: text.length, metricsSeries: series };
}

const db = await createTestDb();
const service = await startService(serviceEnv(db));
try {
  // Warm up with ordinary requests so the baseline has the usual series.
  for (let i = 0; i < 200; i++) await (await fetch(`${service.url}/healthz`)).body?.cancel();
  const before = await sample(service.url, service.pid);
  const started = performance.now();
  const statuses = await rawBurst(service.url, COUNT, CONCURRENCY, (i) => ({
    method: `JUNK${i.toString(36).toUpperCase()}`,
    path: `/x/${i}`,
  }));
  const seconds = (performance.now() - started) / 1000;
  const after = await sample(service.url, service.pid);
  console.log(JSON.stringify(
    {
      requests: COUNT,
      seconds: Math.round(seconds * 10) / 10,
      statuses: Object.fromEntries(statuses),
      before,
      after,
    },
    null,
    2,
  ));
} finally {
  await service.stop();
  await db.close();
}
