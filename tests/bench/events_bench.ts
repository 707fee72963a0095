/**
 * The `events` scenario of `deno task bench`: the event stream with 1,000
 * streams open (event created -> SSE frame, p50/p95 over every stream; the
 * RSS the streams add), and what keeping every event costs: inbox creations
 * per second on this code and on the commit before every event was kept
 * (`BEFORE`, unpacked with `git archive` into tests/bench/.cache), side by
 * side in one run, alternately, on one database server.
 */
import { apiAt, metricValue, newOperatorAccount } from "../_helpers/app.ts";
import { createTestDb } from "../_helpers/db.ts";
import { serviceEnv, type ServiceProcess } from "../_helpers/process.ts";
import { sleep, waitUntil } from "../_helpers/wait.ts";
import { ROOT, startTree, treeAt } from "./trees.ts";

/** The last commit that stored only the events some webhook subscribed to. */
export const BEFORE = "867e9ff";

function rssKb(pid: number): number {
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(Deno.readTextFileSync(`/proc/${pid}/status`))?.[1]);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Event created -> frame on each of `streams` open streams, over `rounds` events; and the RSS they add. */
export async function streamScenario(service: ServiceProcess, streams = 1_000, rounds = 50) {
  const api = apiAt(service.url);
  const user = await newOperatorAccount(api, "business");
  const rssBefore = rssKb(service.pid);
  const arrivals: number[][] = Array.from({ length: rounds }, () => []);
  const connections: Deno.Conn[] = [];
  const readers: Promise<void>[] = [];
  const { hostname, port } = new URL(service.url);
  const request = new TextEncoder().encode(
    `GET /api/events/stream?types=inbox.created HTTP/1.1\r\nHost: ${hostname}:${port}\r\n` +
      `Cookie: ${user.cookie}\r\nAccept: text/event-stream\r\n\r\n`,
  );
  for (let i = 0; i < streams; i++) {
    // A plain HTTP/1.1 client on a TCP socket, so that the figure is the service's, not a heavy client's:
    // each SSE frame is one chunk of the response, read here as it comes, chunk-size lines and all.
    const conn = await Deno.connect({ hostname, port: Number(port) });
    connections.push(conn);
    await conn.write(request);
    readers.push((async () => {
      const decoder = new TextDecoder();
      const chunk = new Uint8Array(64 * 1024);
      let round = 0;
      let buffered = "";
      try {
        while (true) {
          const n = await conn.read(chunk);
          if (n === null) return;
          const at = performance.timeOrigin + performance.now();
          buffered += decoder.decode(chunk.subarray(0, n), { stream: true });
          let end;
          while ((end = buffered.indexOf("\n\n")) >= 0) {
            const frame = buffered.slice(0, end);
            buffered = buffered.slice(end + 2);
            if (!frame.includes("event: inbox.created") || round >= rounds) continue;
            // From the event's createdAt (the service's clock, the same machine's): taken before its
            // transaction, so the figure covers the commit as well as the way to the stream.
            const createdAt = Date.parse(/"createdAt":"([^"]+)"/.exec(frame)![1]!);
            arrivals[round++]!.push(at - createdAt);
          }
        }
      } catch {
        // Closed at the end.
      }
    })());
  }
  await waitUntil(
    async () => await metricValue(service.url, "event_streams") >= streams,
    30_000,
    () => "streams did not all open",
  );
  await sleep(500);
  const rssStreams = rssKb(service.pid);
  const delays: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const res = await api.request("/api/inboxes", { method: "POST", json: {}, cookie: user.cookie });
    await res.body?.cancel();
    await waitUntil(() => arrivals[r]!.length >= streams, 10_000, () => `round ${r}: ${arrivals[r]!.length} frames`);
    delays.push(...arrivals[r]!);
  }
  for (const c of connections) c.close();
  await Promise.all(readers);
  delays.sort((a, b) => a - b);
  const r1 = (x: number) => Math.round(x * 10) / 10;
  return {
    streams,
    frames: delays.length,
    first: r1(delays[0]!),
    p50: r1(percentile(delays, 50)),
    p95: r1(percentile(delays, 95)),
    last: r1(delays.at(-1)!),
    rssAddedMiB: Math.round((rssStreams - rssBefore) / 1024),
  };
}

/** Inbox creations per second for `seconds`, `clients` at once, on the service at `url` (a fresh account). */
async function creationRate(url: string, seconds: number, clients = 16): Promise<number> {
  const api = apiAt(url);
  const user = await newOperatorAccount(api, "business");
  const deadline = performance.now() + seconds * 1000;
  let created = 0;
  await Promise.all(Array.from({ length: clients }, async () => {
    while (performance.now() < deadline) {
      const res = await api.request("/api/inboxes", { method: "POST", json: { ttlSeconds: 60 }, cookie: user.cookie });
      if (res.status === 201) created++;
      await res.body?.cancel();
    }
  }));
  return Math.round(created / seconds);
}

/** Inbox creations/s with every event kept (this code) and before (`BEFORE`), alternately, twice each. */
export async function storeCostScenario() {
  const before = await treeAt(BEFORE);
  // A schema each: the two trees have different migrations.
  const dbs = [await createTestDb(), await createTestDb()] as const;
  const limits = { INBOXES_PER_ACCOUNT: "business=1000000" };
  const now = await startTree(ROOT, serviceEnv(dbs[0], limits));
  const old = await startTree(before, serviceEnv(dbs[1], limits));
  try {
    await creationRate(now.url, 2); // warm-up
    await creationRate(old.url, 2);
    const after: number[] = [], previous: number[] = [];
    for (let round = 0; round < 2; round++) {
      after.push(await creationRate(now.url, 5));
      previous.push(await creationRate(old.url, 5));
    }
    return { after, before: previous, ratio: Math.max(...after) / Math.max(...previous) };
  } finally {
    await now.stop();
    await old.stop();
    for (const db of dbs) await db.close();
  }
}
