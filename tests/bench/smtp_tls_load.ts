/**
 * The SMTP load of the `smtp` scenario's TLS rows: postfix's `smtp-source`
 * speaks no TLS, so this small generator sends over kept connections as an
 * application's pooled transport does (nodemailer `pool: true`): each
 * connection says EHLO, upgrades with STARTTLS (or is TLS from the first
 * byte, for a listener with implicit TLS), authenticates once with AUTH
 * PLAIN, then sends message after message, each MAIL FROM, RCPT TO, DATA and
 * the message with its dot in one write, waiting for every reply (no
 * pipelining, as smtp-source without `-P`). The messages are of 2 kB, as
 * smtp-source's with `-l 2000`. The same generator also runs without TLS,
 * so the rows with and without TLS differ only in TLS.
 *
 * It runs in the bench's own process (Deno's TLS, rustls), as smtp-source
 * runs in its own: both share the machine's two cores with the server.
 */
import { SmtpConversation } from "../smtp/_smtp_client.ts";

/** How the generator reaches the listener. */
export interface SessionLoad {
  /** Kept connections, each sending until the messages run out. */
  connections: number;
  messages: number;
  /** `starttls`: upgrade after EHLO; `implicit`: TLS from the first byte; `none`: plain. */
  tls: "none" | "starttls" | "implicit";
  /** The only certificate trusted (the listener's own, checked for 127.0.0.1). */
  ca?: string;
  /** AUTH PLAIN once per connection, after TLS. */
  auth?: { user: string; pass: string };
}

/** A message of 2 kB (headers, 26 lines of text and the terminating dot), ready to write. */
function message(to: string): string {
  const line = "The quick brown fox jumps over the lazy dog, and the lazy dog sleeps on the porch at noon.";
  const head = ["From: Bench <bench@example.com>", `To: ${to}`, "Subject: TLS bench", ""];
  const body = Array.from({ length: 20 }, () => line);
  return [...head, ...body, ""].join("\r\n").padEnd(2000, "x") + "\r\n.\r\n";
}

function expect(reply: { code: number; text: string }, code: number, what: string): void {
  if (reply.code !== code) throw new Error(`${what}: ${reply.code} ${reply.text}`);
}

/** One kept connection: set up, then messages while `take()` grants one. */
async function session(port: number, to: string, load: SessionLoad, take: () => boolean): Promise<void> {
  if (load.tls !== "none" && load.ca === undefined) throw new Error("a TLS load needs the listener's certificate");
  const smtp = await SmtpConversation.open(port, load.tls === "implicit" ? load.ca : undefined);
  try {
    expect(await smtp.command("EHLO bench.example.com"), 250, "EHLO");
    if (load.tls === "starttls") {
      expect(await smtp.startTls(load.ca!), 220, "STARTTLS");
      expect(await smtp.command("EHLO bench.example.com"), 250, "EHLO after STARTTLS");
    }
    if (load.auth) {
      const token = btoa(`\0${load.auth.user}\0${load.auth.pass}`);
      expect(await smtp.command(`AUTH PLAIN ${token}`), 235, "AUTH");
    }
    const raw = message(to);
    while (take()) {
      expect(await smtp.command("MAIL FROM:<bench@example.com>"), 250, "MAIL FROM");
      expect(await smtp.command(`RCPT TO:<${to}>`), 250, "RCPT TO");
      expect(await smtp.command("DATA"), 354, "DATA");
      await smtp.write(raw);
      expect(await smtp.reply(), 250, "message");
    }
  } finally {
    await smtp.quit();
  }
}

/** Sends `load.messages` to `to` at 127.0.0.1:`port`; returns messages per second, connections and TLS included. */
export async function smtpSessionLoad(port: number, to: string, load: SessionLoad): Promise<number> {
  let left = load.messages;
  const take = () => left-- > 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: load.connections }, () => session(port, to, load, take)));
  return Math.round(load.messages / ((performance.now() - started) / 1000));
}
