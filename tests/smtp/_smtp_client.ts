/**
 * A raw SMTP conversation over `Deno.connect`, for tests that need to see
 * each reply (RCPT refusals, the reply to DATA) or send bytes no mail library
 * would produce (malformed MIME, no SIZE declaration).
 */

/** One SMTP reply: its code and its (possibly multi-line) text. */
export interface SmtpReply {
  code: number;
  text: string;
}

/** An open SMTP connection. */
export class SmtpConversation {
  #conn: Deno.Conn;
  readonly #decoder = new TextDecoder();
  readonly #encoder = new TextEncoder();
  #buffer = "";

  private constructor(conn: Deno.Conn) {
    this.#conn = conn;
  }

  /**
   * Connects and reads the greeting (which must be 220); with `tlsCa`, over
   * TLS from the first byte (implicit TLS) trusting only that certificate.
   */
  static async open(port: number, tlsCa?: string): Promise<SmtpConversation> {
    const conn = tlsCa === undefined
      ? await Deno.connect({ hostname: "127.0.0.1", port })
      : await Deno.connectTls({ hostname: "127.0.0.1", port, caCerts: [tlsCa] });
    const smtp = new SmtpConversation(conn);
    const greeting = await smtp.reply();
    if (greeting.code !== 220) throw new Error(`greeting: ${greeting.code} ${greeting.text}`);
    return smtp;
  }

  async #line(): Promise<string> {
    while (true) {
      const end = this.#buffer.indexOf("\r\n");
      if (end >= 0) {
        const line = this.#buffer.slice(0, end);
        this.#buffer = this.#buffer.slice(end + 2);
        return line;
      }
      const chunk = new Uint8Array(4096);
      const n = await this.#conn.read(chunk);
      if (n === null) throw new Error(`connection closed; pending: ${JSON.stringify(this.#buffer)}`);
      this.#buffer += this.#decoder.decode(chunk.subarray(0, n), { stream: true });
    }
  }

  /** Reads one reply (all lines of a multi-line one). */
  async reply(): Promise<SmtpReply> {
    const lines: string[] = [];
    while (true) {
      const line = await this.#line();
      lines.push(line.slice(4));
      if (line[3] !== "-") return { code: Number(line.slice(0, 3)), text: lines.join("\n") };
    }
  }

  /** Writes raw text. */
  async write(text: string): Promise<void> {
    const bytes = this.#encoder.encode(text);
    let written = 0;
    while (written < bytes.length) written += await this.#conn.write(bytes.subarray(written));
  }

  /** Sends one command line and reads its reply. */
  async command(line: string): Promise<SmtpReply> {
    await this.write(`${line}\r\n`);
    return await this.reply();
  }

  /** DATA, then the message (dot-stuffed) and the terminating dot; returns the reply to the message. */
  async data(raw: string): Promise<SmtpReply> {
    const go = await this.command("DATA");
    if (go.code !== 354) return go;
    const body = raw.replace(/\r?\n/g, "\r\n").replace(/^\./gm, "..");
    await this.write(`${body}${body.endsWith("\r\n") ? "" : "\r\n"}.\r\n`);
    return await this.reply();
  }

  /**
   * STARTTLS, then the TLS handshake trusting only `caPem` (the name checked
   * is 127.0.0.1); returns the reply to STARTTLS, and upgrades only on 220.
   */
  async startTls(caPem: string): Promise<SmtpReply> {
    const reply = await this.command("STARTTLS");
    if (reply.code !== 220) return reply;
    this.#conn = await Deno.startTls(this.#conn as Deno.TcpConn, { hostname: "127.0.0.1", caCerts: [caPem] });
    return reply;
  }

  /** QUIT and close the connection. */
  async quit(): Promise<void> {
    try {
      await this.command("QUIT");
    } finally {
      this.#conn.close();
    }
  }
}

/** Result of a whole conversation: the reply to each RCPT and to the message. */
export interface Delivery {
  rcpt: SmtpReply[];
  /** Undefined when no recipient was accepted (DATA not sent). */
  data: SmtpReply | undefined;
}

/** Runs EHLO, MAIL FROM, RCPT TO for each recipient and, if any was accepted, DATA; then QUIT. */
export async function sendRaw(
  port: number,
  envelope: { from: string; to: string[] },
  raw: string,
): Promise<Delivery> {
  const smtp = await SmtpConversation.open(port);
  try {
    const ehlo = await smtp.command("EHLO client.test");
    if (ehlo.code !== 250) throw new Error(`EHLO: ${ehlo.code} ${ehlo.text}`);
    const mail = await smtp.command(`MAIL FROM:<${envelope.from}>`);
    if (mail.code !== 250) throw new Error(`MAIL FROM: ${mail.code} ${mail.text}`);
    const rcpt: SmtpReply[] = [];
    for (const to of envelope.to) rcpt.push(await smtp.command(`RCPT TO:<${to}>`));
    const data = rcpt.some((r) => r.code === 250) ? await smtp.data(raw) : undefined;
    return { rcpt, data };
  } finally {
    await smtp.quit();
  }
}
