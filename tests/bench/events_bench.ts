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
import { freePort } from "../_helpers/ports.ts";
import { serviceEnv, type ServiceProcess } from "../_helpers/process.ts";
import { sleep, waitUntil } from "../_helpers/wait.ts";
import { SmtpConversation } from "../smtp/_smtp_client.ts";
import { ROOT, startTree, treeAt } from "./trees.ts";
import { percentile } from "./stats.ts";

/** The last commit that stored only the events some webhook subscribed to. */
export const BEFORE = "867e9ff";

function rssKb(pid: number): number {
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(Deno.readTextFileSync(`/proc/${pid}/status`))?.[1]);
}

/**
 * Opens `streams` SSE streams with `request` (a whole HTTP/1.1 request head)
 * to `base`, then `rounds` times fires an event (`fire`) and waits until every
 * stream has its frame: the times from each event's `createdAt` to its frame's
 * arrival, sorted, and a function that closes the streams.
 */
async function streamLatencies(
  base: string,
  request: string,
  streams: number,
  rounds: number,
  opened: () => Promise<boolean>,
  fire: () => Promise<void>,
  afterOpen: () => Promise<void> = () => Promise.resolve(),
): Promise<number[]> {
  const arrivals: number[][] = Array.from({ length: rounds }, () => []);
  const connections: Deno.Conn[] = [];
  const readers: Promise<void>[] = [];
  const { hostname, port } = new URL(base);
  const head = new TextEncoder().encode(request);
  for (let i = 0; i < streams; i++) {
    // A plain HTTP/1.1 client on a TCP socket, so that the figure is the server's, not a heavy client's:
    // each SSE frame is one chunk of the response, read here as it comes, chunk-size lines and all.
    const conn = await Deno.connect({ hostname, port: Number(port) });
    connections.push(conn);
    await conn.write(head);
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
            // From the event's createdAt (the server's clock, the same machine's): the service takes it
            // before its transaction, so the service's figure covers the commit as well.
            const createdAt = Date.parse(/"createdAt":"([^"]+)"/.exec(frame)![1]!);
            arrivals[round++]!.push(at - createdAt);
          }
        }
      } catch {
        // Closed at the end.
      }
    })());
  }
  await waitUntil(opened, 30_000, () => "streams did not all open");
  await sleep(500);
  await afterOpen();
  const delays: number[] = [];
  for (let r = 0; r < rounds; r++) {
    await fire();
    await waitUntil(() => arrivals[r]!.length >= streams, 10_000, () => `round ${r}: ${arrivals[r]!.length} frames`);
    delays.push(...arrivals[r]!);
  }
  for (const c of connections) c.close();
  await Promise.all(readers);
  return delays.sort((a, b) => a - b);
}

const r1 = (x: number) => Math.round(x * 10) / 10;

/** p50, p95, first and last of sorted delays. */
function summary(delays: number[]) {
  return {
    frames: delays.length,
    first: r1(delays[0]!),
    p50: r1(percentile(delays, 50)),
    p95: r1(percentile(delays, 95)),
    last: r1(delays.at(-1)!),
  };
}

/** Event created -> frame on each of `streams` open streams of the service, over `rounds` events; and the RSS they add. */
export async function streamScenario(service: ServiceProcess, streams = 1_000, rounds = 50) {
  const api = apiAt(service.url);
  const user = await newOperatorAccount(api, "business");
  const rssBefore = rssKb(service.pid);
  const { host } = new URL(service.url);
  let rssStreams = 0;
  const delays = await streamLatencies(
    service.url,
    `GET /api/events/stream?types=inbox.created HTTP/1.1\r\nHost: ${host}\r\n` +
      `Cookie: ${user.cookie}\r\nAccept: text/event-stream\r\n\r\n`,
    streams,
    rounds,
    async () => await metricValue(service.url, "event_streams") >= streams,
    async () => {
      const res = await api.request("/api/inboxes", { method: "POST", json: {}, cookie: user.cookie });
      await res.body?.cancel();
    },
    () => {
      rssStreams = rssKb(service.pid);
      return Promise.resolve();
    },
  );
  return { streams, ...summary(delays), rssAddedMiB: Math.round((rssStreams - rssBefore) / 1024) };
}

/**
 * SMTP `250` -> the `message.received` frame on one open stream of the
 * account (design: as for the wait, p50 <= 10 ms, p95 <= 20 ms): messages go
 * in one at a time over a kept SMTP connection, and each delay is from the
 * client reading the `250` to the frame's arrival (negative when the frame
 * came first: the commit wakes the stream before the reply is written).
 */
export async function smtpToFrameScenario(service: ServiceProcess, smtpPort: number, rounds = 200) {
  const api = apiAt(service.url);
  const user = await newOperatorAccount(api, "pro");
  const inbox = await (await api.request("/api/inboxes", { method: "POST", json: {}, cookie: user.cookie })).json();
  const { host, hostname, port } = new URL(service.url);
  const conn = await Deno.connect({ hostname, port: Number(port) });
  await conn.write(
    new TextEncoder().encode(
      `GET /api/events/stream?types=message.received HTTP/1.1\r\nHost: ${host}\r\n` +
        `Cookie: ${user.cookie}\r\nAccept: text/event-stream\r\n\r\n`,
    ),
  );
  const frames: number[] = [];
  const reader = (async () => {
    const decoder = new TextDecoder();
    const chunk = new Uint8Array(64 * 1024);
    let buffered = "";
    try {
      while (true) {
        const n = await conn.read(chunk);
        if (n === null) return;
        const at = performance.now();
        buffered += decoder.decode(chunk.subarray(0, n), { stream: true });
        let end;
        while ((end = buffered.indexOf("\n\n")) >= 0) {
          if (buffered.slice(0, end).includes("event: message.received")) frames.push(at);
          buffered = buffered.slice(end + 2);
        }
      }
    } catch {
      // Closed at the end.
    }
  })();
  await waitUntil(async () => await metricValue(service.url, "event_streams") >= 1, 10_000, () => "no stream");
  const smtp = await SmtpConversation.open(smtpPort);
  const delays: number[] = [];
  try {
    await smtp.command("EHLO bench.test");
    for (let i = 0; i < rounds + 20; i++) {
      const mail = await smtp.command("MAIL FROM:<bench@example.com>");
      const rcpt = await smtp.command(`RCPT TO:<${inbox.address}>`);
      const data = await smtp.data(
        `From: bench@example.com\r\nTo: ${inbox.address}\r\nSubject: round ${i}\r\n\r\nYour code is 482913.\r\n`,
      );
      if (mail.code !== 250 || rcpt.code !== 250 || data.code !== 250) {
        throw new Error(`SMTP refused round ${i}: ${mail.code} ${rcpt.code} ${data.code}`);
      }
      const saidOk = performance.now();
      await waitUntil(() => frames.length > i, 5_000, () => `no frame for round ${i}`);
      if (i >= 20) delays.push(frames[i]! - saidOk); // the first 20 warm up
    }
  } finally {
    await smtp.quit();
    conn.close();
    await reader;
  }
  delays.sort((a, b) => a - b);
  return {
    n: delays.length,
    p50: r1(percentile(delays, 50)),
    p95: r1(percentile(delays, 95)),
    max: r1(delays.at(-1)!),
  };
}

/**
 * The same with a bare Deno.serve (`sse_bare_server.ts`) that enqueues one
 * frame into each of its open responses: the physical limit, Deno's HTTP
 * server writing to 1,000 streams, with no commit and no read before it.
 */
export async function bareStreamScenario(streams = 1_000, rounds = 50) {
  const port = freePort();
  const child = new Deno.Command("deno", {
    args: ["run", "-A", new URL("./sse_bare_server.ts", import.meta.url).pathname, String(port)],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  for (let said = ""; !said.includes("ready");) {
    const { value, done } = await reader.read();
    if (done) throw new Error("sse_bare_server.ts exited before it was ready");
    said += value;
  }
  reader.releaseLock();
  void child.stdout.cancel().catch(() => {});
  const base = `http://127.0.0.1:${port}`;
  try {
    const delays = await streamLatencies(
      base,
      `GET /stream HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\n\r\n`,
      streams,
      rounds,
      async () => ((await (await fetch(`${base}/count`)).json()) as { streams: number }).streams >= streams,
      async () => {
        await (await fetch(`${base}/fire`, { method: "POST" })).body?.cancel();
      },
    );
    return { streams, ...summary(delays) };
  } finally {
    child.kill("SIGKILL");
    await child.status;
  }
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
  const dbs = [await createTestDb(), await createTestDb({ migrated: false })] as const;
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
