/**
 * The `wait` scenario of `deno task bench`: how soon a waiting
 * `GET .../messages/wait` answers after the SMTP server said 250 for the
 * message, and what 1,000 concurrent waiters cost the service (RSS, database
 * connections in use) and whether one message wakes them all.
 */
import { apiAt, metricValue, newOperatorAccount } from "../_helpers/app.ts";
import type { TestDb } from "../_helpers/db.ts";
import type { ServiceProcess } from "../_helpers/process.ts";
import { sleep, waitUntil } from "../_helpers/wait.ts";
import { SmtpConversation } from "../smtp/_smtp_client.ts";
import { percentile } from "./stats.ts";

/** What the scenario measured. */
export interface WaitFigures {
  latency: { n: number; p50: number; p95: number; max: number };
  waiters: {
    count: number;
    rssBeforeKb: number;
    rssWaitingKb: number;
    busyConnections: number;
    woken: number;
    allWokenMs: number;
  };
}

function rssKb(pid: number): number {
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(Deno.readTextFileSync(`/proc/${pid}/status`))?.[1]);
}

/** Sends one message over an open conversation; resolves when the server said 250 to it. */
async function send(smtp: SmtpConversation, to: string, subject: string): Promise<void> {
  const mail = await smtp.command("MAIL FROM:<bench@example.com>");
  if (mail.code !== 250) throw new Error(`MAIL FROM: ${mail.code}`);
  const rcpt = await smtp.command(`RCPT TO:<${to}>`);
  if (rcpt.code !== 250) throw new Error(`RCPT TO: ${rcpt.code}`);
  const data = await smtp.data(
    `From: bench@example.com\r\nTo: ${to}\r\nSubject: ${subject}\r\n\r\nYour code is 482913.\r\n`,
  );
  if (data.code !== 250) throw new Error(`DATA: ${data.code} ${data.text}`);
}

/** Runs the scenario against a running service whose SMTP listener is on `smtpPort`. */
export async function waitScenario(
  service: ServiceProcess,
  smtpPort: number,
  db: TestDb,
  rounds = 200,
  waiters = 1_000,
): Promise<WaitFigures> {
  const api = apiAt(service.url);
  const user = await newOperatorAccount(api, "pro");
  const newInbox = async () =>
    await (await api.request("/api/inboxes", { method: "POST", json: {}, cookie: user.cookie })).json();
  const wait = (inboxId: string, after?: string) =>
    api.request(
      `/api/inboxes/${inboxId}/messages/wait?timeoutMs=20000${after ? `&after=${after}` : ""}`,
      { cookie: user.cookie },
    );

  // 1. SMTP 250 -> the waiting request answers, one message at a time over a kept connection.
  const inbox = await newInbox();
  const smtp = await SmtpConversation.open(smtpPort);
  const delays: number[] = [];
  try {
    await smtp.command("EHLO bench.test");
    let after: string | undefined;
    for (let i = 0; i < rounds + 20; i++) {
      let answeredAt = 0;
      const pending = wait(inbox.id, after).then(async (res) => {
        answeredAt = performance.now();
        if (res.status !== 200) throw new Error(`wait answered ${res.status}`);
        return (await res.json()).id as string;
      });
      await sleep(5); // the request is waiting when the message comes
      await send(smtp, inbox.address, `round ${i}`);
      const saidOk = performance.now();
      after = await pending;
      if (i >= 20) delays.push(answeredAt - saidOk); // the first 20 warm up
    }
  } finally {
    await smtp.quit();
  }
  delays.sort((a, b) => a - b);
  const round1 = (x: number) => Math.round(x * 10) / 10;

  // 2. 1,000 requests waiting on one inbox: their cost, then one message for all of them.
  const crowd = await newInbox();
  const rssBeforeKb = rssKb(service.pid);
  const answers = Array.from({ length: waiters }, () =>
    wait(crowd.id).then(async (res) => {
      await res.body?.cancel();
      return res.status;
    }));
  await waitUntil(
    async () => await metricValue(service.url, "inbox_message_waiters") >= waiters,
    30_000,
    () => "the waiters did not all start",
  );
  await sleep(500);
  const rssWaitingKb = rssKb(service.pid);
  // Connections of the service's pool that are in use (not idle) while 1,000 requests wait.
  const [busy] = await db.sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM pg_stat_activity
    WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND state <> 'idle'
      AND datname = current_database()`;
  const conversation = await SmtpConversation.open(smtpPort);
  let saidOk = 0;
  try {
    await conversation.command("EHLO bench.test");
    await send(conversation, crowd.address, "for everyone");
    saidOk = performance.now();
  } finally {
    await conversation.quit();
  }
  const statuses = await Promise.all(answers);
  const allWokenMs = performance.now() - saidOk;
  return {
    latency: {
      n: delays.length,
      p50: round1(percentile(delays, 50)),
      p95: round1(percentile(delays, 95)),
      max: round1(delays.at(-1)!),
    },
    waiters: {
      count: waiters,
      rssBeforeKb,
      rssWaitingKb,
      busyConnections: busy!.n,
      woken: statuses.filter((s) => s === 200).length,
      allWokenMs: Math.round(allWokenMs),
    },
  };
}
