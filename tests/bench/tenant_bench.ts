/**
 * What one tenant's open requests cost the others, measured on this tree and
 * on the tree before the bounds (`BEFORE_BOUNDS`, unpacked with `git
 * archive`), side by side in one run, on one database server:
 *
 *   slow streams  20 event streams that never read, each replaying about
 *                 20 MB of the account's log: the service's RSS added (peak).
 *   woken waits   300 waits on one inbox with a `contains=` filter that never
 *                 matches, woken by 10 mails of 100 KB: another tenant's p95
 *                 of `GET /api/inboxes` meanwhile, and the owner's own mails'
 *                 SMTP time.
 */
// @ts-types="npm:@types/nodemailer@8.0.2"
import nodemailer from "npm:nodemailer@10.6.0";
import { apiAt, newApiKey, newOperatorAccount } from "../_helpers/app.ts";
import { createTestDb, type TestDb } from "../_helpers/db.ts";
import { serviceEnv } from "../_helpers/process.ts";
import { sleep } from "../_helpers/wait.ts";
import { ROOT, startTree, treeAt, type TreeService } from "./trees.ts";
import { percentile } from "./stats.ts";

/** The last commit before streams read and queued in bytes, and before waits shared one read per inbox. */
export const BEFORE_BOUNDS = "6466af4";

function rssMiB(pid: number): number {
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(Deno.readTextFileSync(`/proc/${pid}/status`))?.[1]) / 1024;
}

const round1 = (n: number) => Math.round(n * 10) / 10;

/** Both trees, each on a schema of its own (their migrations differ), with `env`. */
async function bothTrees(env: Record<string, string>) {
  const before = await treeAt(BEFORE_BOUNDS);
  const dbs = [await createTestDb(), await createTestDb({ migrated: false })] as const;
  const trees: { name: string; db: TestDb; service: TreeService }[] = [
    { name: "this tree", db: dbs[0], service: await startTree(ROOT, serviceEnv(dbs[0], env)) },
    { name: `before (${BEFORE_BOUNDS})`, db: dbs[1], service: await startTree(before, serviceEnv(dbs[1], env)) },
  ];
  return {
    trees,
    async close() {
      for (const t of trees) await t.service.stop();
      for (const db of dbs) await db.close();
    },
  };
}

/** 20 streams that never read, each replaying the account's ~20 MB log; the RSS they add (peak over 10 s). */
async function slowStreams(t: { db: TestDb; service: TreeService }, eventBytes: number): Promise<number> {
  const api = apiAt(t.service.url);
  const user = await newOperatorAccount(api, "pro");
  const { key } = await newApiKey(api, user);
  const count = Math.ceil((20 * 1024 * 1024) / eventBytes);
  const filler = "x".repeat(eventBytes - 160);
  await t.db.sql`
    INSERT INTO events (id, account_id, type, payload, created_at, seq)
    SELECT 'evt_slow_' || g, ${user.id}, 'inbox.created',
      '{"id":"evt_slow_' || g || '","type":"inbox.created","createdAt":"2026-01-01T00:00:00.000Z",' ||
      '"data":{"inboxId":"inb_slow","address":"slow@inbox.localhost","filler":"' || ${filler} || '"}}',
      now(), nextval('events_seq')
    FROM generate_series(1, ${count}) g`;
  await sleep(1000);
  const before = rssMiB(t.service.pid);
  const conns: Deno.TcpConn[] = [];
  for (let i = 0; i < 20; i++) {
    const c = await Deno.connect({ hostname: "127.0.0.1", port: t.service.port });
    await c.write(new TextEncoder().encode(
      `GET /api/events/stream?after=evt_slow_1 HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer ${key}\r\n\r\n`,
    ));
    conns.push(c);
  }
  let peak = before;
  for (let i = 0; i < 20; i++) {
    await sleep(500);
    peak = Math.max(peak, rssMiB(t.service.pid));
  }
  for (const c of conns) c.close();
  await sleep(500);
  return peak - before;
}

/** Sends `mails` mails over one kept connection; the SMTP time of each (ms). */
async function sendMails(port: number, to: string, mails: number, bytes: number): Promise<number[]> {
  const transport = nodemailer.createTransport({ host: "127.0.0.1", port, secure: false, ignoreTLS: true, pool: true });
  const times: number[] = [];
  try {
    for (let i = 0; i < mails; i++) {
      const started = performance.now();
      await transport.sendMail({ from: "s@example.com", to, subject: `big ${i}`, text: "lorem ".repeat(bytes / 6) });
      times.push(performance.now() - started);
      await sleep(100);
    }
  } finally {
    transport.close();
  }
  return times;
}

/** 300 filtered waits woken by 10 mails of 100 KB; another tenant's p95 and the owner's SMTP times. */
async function wokenWaits(t: { service: TreeService }) {
  const api = apiAt(t.service.url);
  const owner = await newOperatorAccount(api, "business");
  const other = await newOperatorAccount(api, "business");
  const inboxRes = await api.request("/api/inboxes", { method: "POST", json: {}, cookie: owner.cookie });
  const inbox = await inboxRes.json() as { id: string; address: string };
  const stop = new AbortController();
  const waits = Array.from(
    { length: 300 },
    () =>
      api.request(`/api/inboxes/${inbox.id}/messages/wait?timeoutMs=55000&contains=never-in-any-mail`, {
        cookie: owner.cookie,
        signal: stop.signal,
      }).then((r) => r.body?.cancel(), () => {}),
  );
  await sleep(2000);
  // Another tenant's ordinary reads, 4 clients back to back, while the mails arrive.
  const latencies: number[] = [];
  let reading = true;
  const readers = Array.from({ length: 4 }, async () => {
    while (reading) {
      const started = performance.now();
      const res = await api.request("/api/inboxes", { cookie: other.cookie });
      await res.body?.cancel();
      latencies.push(performance.now() - started);
    }
  });
  await sleep(500);
  const quiet = [...latencies].sort((a, b) => a - b);
  latencies.length = 0;
  const smtp = await sendMails(t.service.smtpPort, inbox.address, 10, 100_000);
  await sleep(500);
  reading = false;
  await Promise.all(readers);
  stop.abort();
  await Promise.allSettled(waits);
  const busy = latencies.sort((a, b) => a - b);
  const mails = [...smtp].sort((a, b) => a - b);
  return {
    quietP95: round1(percentile(quiet, 95)),
    p50: round1(percentile(busy, 50)),
    p95: round1(percentile(busy, 95)),
    requests: busy.length,
    smtpP50: round1(percentile(mails, 50)),
    smtpMax: round1(mails.at(-1) ?? NaN),
  };
}

type Row = (
  scenario: string,
  metric: string,
  service: number | string,
  limit?: number | string,
  ratio?: string,
) => void;

/** Slow streams, this tree and before, alternately; 40 KB and 1 KB events. */
export async function slowStreamsScenario(row: Row) {
  const results: Record<string, unknown> = {};
  for (const eventBytes of [40_000, 1_000]) {
    const pair = await bothTrees({});
    try {
      const added: Record<string, number> = {};
      for (const t of pair.trees) added[t.name] = round1(await slowStreams(t, eventBytes));
      const [now, old] = pair.trees.map((t) => added[t.name]!);
      row(
        "slow streams",
        `RSS added by 20 unread streams replaying 20 MB of ${eventBytes / 1000} KB events, MiB (before)`,
        now!,
        old!,
        "<= 100 MiB",
      );
      results[`${eventBytes}`] = added;
    } finally {
      await pair.close();
    }
  }
  return results;
}

/** Woken waits, this tree and before. */
export async function wokenWaitsScenario(row: Row) {
  // This tree bounds pending waits per account (200 by default): the scenario holds 300.
  const pair = await bothTrees({ MESSAGE_WAITS_PER_ACCOUNT: "1000" });
  try {
    const out: Record<string, Awaited<ReturnType<typeof wokenWaits>>> = {};
    for (const t of pair.trees) {
      out[t.name] = await wokenWaits(t);
    }
    const [now, old] = pair.trees.map((t) => out[t.name]!);
    row(
      "woken waits",
      "another tenant's p95 ms while 300 waits are woken by 10 mails of 100 KB (before)",
      now!.p95,
      old!.p95,
      "< 100 ms",
    );
    row("woken waits", "another tenant's p50 ms (before)", now!.p50, old!.p50);
    row("woken waits", "another tenant's p95 ms before the mails (before)", now!.quietP95, old!.quietP95);
    row(
      "woken waits",
      "the owner's mails: SMTP p50 / slowest ms (before)",
      `${now!.smtpP50} / ${now!.smtpMax}`,
      `${old!.smtpP50} / ${old!.smtpMax}`,
    );
    return out;
  } finally {
    await pair.close();
  }
}
