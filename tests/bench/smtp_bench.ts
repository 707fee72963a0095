/**
 * The `smtp` scenario of `deno task bench`: durable SMTP ingestion of the
 * service against MailDev (npm `maildev`, the tool many teams run for the
 * same job), with one load generator for both, postfix's `smtp-source`.
 * Two loads: a new connection per message from 64 clients, and 8 kept
 * connections (`-d`).
 *
 * And one message to 100 recipients, stored by this code and by the commit
 * that stored each recipient in a transaction of its own (`BEFORE_BATCHED`),
 * side by side.
 *
 * And, since smtp-source speaks no TLS, 8 kept connections from a small
 * Deno generator (smtp_tls_load.ts) with and without STARTTLS + AUTH, against
 * the service and MailDev side by side. MailDev offers no STARTTLS (its
 * smtp-server runs with `hideSTARTTLS`, and `--incoming-secure` is implicit
 * TLS), so its TLS figure is over implicit TLS + AUTH, the nearest it has,
 * and the service with TLS is also set against MailDev without.
 *
 * Neither tool is installed: postfix's package is downloaded with
 * `apt-get download` and unpacked into tests/bench/.cache (never installed),
 * MailDev is installed with npm into the same cache.
 */
import { apiAt, newOperatorAccount } from "../_helpers/app.ts";
import { createTestDb } from "../_helpers/db.ts";
import { freePort } from "../_helpers/ports.ts";
import { serviceEnv } from "../_helpers/process.ts";
import { sleep } from "../_helpers/wait.ts";
import { SmtpConversation } from "../smtp/_smtp_client.ts";
import { ROOT, startTree, treeAt, type TreeService } from "./trees.ts";
import { type DebianTool, debianTool } from "./debian_tools.ts";

export const CACHE = new URL("./.cache/", import.meta.url);
const MAILDEV_VERSION = "3.0.0";

async function run(cmd: string, args: string[], cwd: URL, env: Record<string, string> = {}): Promise<string> {
  const out = await new Deno.Command(cmd, { args, cwd, env, stdout: "piped", stderr: "piped" }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  if (!out.success) throw new Error(`${cmd} ${args.join(" ")} failed: ${text}`);
  return text;
}

async function exists(url: URL): Promise<boolean> {
  return await Deno.stat(url).then(() => true, () => false);
}

/** postfix's smtp-source, unpacked from Debian's postfix package (never installed). */
export async function smtpSource(): Promise<DebianTool> {
  return await debianTool("postfix", ["postfix"], "usr/sbin/smtp-source", ["usr/lib/postfix"]);
}

/**
 * Starts MailDev (installed into the cache with npm) with its SMTP port and `extraArgs` (its TLS and AUTH options);
 * resolves once it accepts connections.
 */
export async function startMailDev(extraArgs: string[] = []): Promise<{ port: number; stop(): Promise<void> }> {
  const dir = new URL("maildev/", CACHE);
  const main = new URL("node_modules/maildev/dist/bin/maildev.js", dir);
  if (!await exists(main)) {
    await Deno.mkdir(dir, { recursive: true });
    await run(
      "npm",
      ["install", "--no-audit", "--no-fund", "--prefix", dir.pathname, `maildev@${MAILDEV_VERSION}`],
      dir,
    );
  }
  const port = freePort();
  const child = new Deno.Command("node", {
    args: [
      main.pathname,
      ...["--smtp", String(port), "--web", String(freePort()), "--ip", "127.0.0.1", "--silent"],
      ...extraArgs,
    ],
    stdout: "null",
    stderr: "null",
  }).spawn();
  for (let i = 0; i < 100; i++) {
    try {
      (await Deno.connect({ hostname: "127.0.0.1", port })).close();
      break;
    } catch {
      await sleep(100);
    }
  }
  return {
    port,
    stop: async () => {
      child.kill("SIGKILL");
      await child.status;
    },
  };
}

/** One smtp-source run: `messages` to `to` at 127.0.0.1:`port`; returns messages per second. */
export async function smtpLoad(
  tool: DebianTool,
  port: number,
  to: string,
  load: { sessions: number; keep: boolean; messages: number },
): Promise<number> {
  const args = [
    ...(load.keep ? ["-d"] : []),
    "-s",
    String(load.sessions),
    "-m",
    String(load.messages),
    "-l",
    "2000",
    "-f",
    "bench@example.com",
    "-t",
    to,
    `127.0.0.1:${port}`,
  ];
  const started = performance.now();
  await run(tool.bin, args, new URL("./", import.meta.url), { LD_LIBRARY_PATH: tool.libs });
  return Math.round(load.messages / ((performance.now() - started) / 1000));
}

/** The last commit that stored a message in one transaction per recipient: the smtp scenario's "before". */
export const BEFORE_BATCHED = "cc8c7f9";

/** A message of about 2 kB, as smtp-source sends. */
function benchMessage(to: string, n: number): string {
  const line = "The quick brown fox jumps over the lazy dog, and the lazy dog sleeps on.";
  return [
    "From: Bench <bench@example.com>",
    `To: ${to}`,
    `Subject: Recipients bench ${n}`,
    "Content-Type: text/plain; charset=utf-8",
    "",
    ...Array.from({ length: 26 }, () => line),
    "",
  ].join("\r\n");
}

/**
 * `messages` messages to `addresses` over one kept SMTP connection. The
 * figure is the storing alone: from sending the message (with its
 * terminating dot) to the `250` (every recipient's copy committed), summed
 * over the messages.
 */
async function sendToAll(smtpPort: number, addresses: string[], messages: number): Promise<number> {
  const smtp = await SmtpConversation.open(smtpPort);
  try {
    await smtp.command("EHLO bench.example.com");
    let storingMs = 0;
    for (let n = 0; n < messages; n++) {
      const mail = await smtp.command("MAIL FROM:<bench@example.com>");
      if (mail.code !== 250) throw new Error(`MAIL FROM: ${mail.code} ${mail.text}`);
      for (const address of addresses) {
        const rcpt = await smtp.command(`RCPT TO:<${address}>`);
        if (rcpt.code !== 250) throw new Error(`RCPT TO ${address}: ${rcpt.code} ${rcpt.text}`);
      }
      const go = await smtp.command("DATA");
      if (go.code !== 354) throw new Error(`DATA: ${go.code} ${go.text}`);
      // The message and its terminating dot in one write, as a sender does (two small writes would
      // meet Nagle's algorithm and the server's delayed ACK: 40 ms).
      const started = performance.now();
      await smtp.write(`${benchMessage(addresses[0]!, n)}.\r\n`);
      const stored = await smtp.reply();
      storingMs += performance.now() - started;
      if (stored.code !== 250) throw new Error(`message: ${stored.code} ${stored.text}`);
    }
    return storingMs;
  } finally {
    await smtp.quit();
  }
}

/** A fresh account with `count` inboxes on `tree`: their addresses, the first inbox's id, the session. */
async function inboxesOn(tree: TreeService, count: number) {
  const api = apiAt(tree.url);
  const user = await newOperatorAccount(api, "business");
  const created: { id: string; address: string }[] = [];
  for (let i = 0; i < count; i++) {
    const res = await api.request("/api/inboxes", { method: "POST", json: {}, cookie: user.cookie });
    if (res.status !== 201) throw new Error(`creating an inbox: ${res.status} ${await res.text()}`);
    created.push(await res.json());
  }
  return { addresses: created.map((c) => c.address), firstId: created[0]!.id, cookie: user.cookie };
}

/** How many messages the inbox holds (up to 100). */
async function messageCount(tree: TreeService, inboxId: string, cookie: string): Promise<number> {
  const res = await apiAt(tree.url).request(`/api/inboxes/${inboxId}/messages?limit=100`, { cookie });
  if (res.status !== 200) throw new Error(`listing messages: ${res.status}`);
  return ((await res.json()) as { data: unknown[] }).data.length;
}

/**
 * One message to `recipients` inboxes, stored by this code and by
 * `BEFORE_BATCHED`, alternately, `rounds` times `messages` messages each:
 * recipients stored per second (from the terminating dot to the 250).
 */
export async function recipientsScenario(recipients = 100, messages = 10, rounds = 2) {
  const before = await treeAt(BEFORE_BATCHED);
  const dbs = [await createTestDb(), await createTestDb({ migrated: false })] as const;
  const now = await startTree(ROOT, serviceEnv(dbs[0]));
  const old = await startTree(before, serviceEnv(dbs[1]));
  try {
    const trees = [
      { tree: now, inboxes: await inboxesOn(now, recipients), rates: [] as number[] },
      { tree: old, inboxes: await inboxesOn(old, recipients), rates: [] as number[] },
    ];
    for (const t of trees) await sendToAll(t.tree.smtpPort, t.inboxes.addresses, 2); // warm-up
    for (let round = 0; round < rounds; round++) {
      for (const t of trees) {
        const ms = await sendToAll(t.tree.smtpPort, t.inboxes.addresses, messages);
        t.rates.push(Math.round((recipients * messages) / (ms / 1000)));
      }
    }
    const sent = 2 + rounds * messages;
    for (const t of trees) {
      const held = await messageCount(t.tree, t.inboxes.firstId, t.inboxes.cookie);
      if (held !== sent) throw new Error(`an inbox of ${t.tree.url} holds ${held} messages, not ${sent}`);
    }
    const [after, previous] = trees.map((t) => t.rates) as [number[], number[]];
    return { recipients, after, before: previous, ratio: Math.max(...after) / Math.max(...previous) };
  } finally {
    await now.stop();
    await old.stop();
    for (const db of dbs) await db.close();
  }
}
