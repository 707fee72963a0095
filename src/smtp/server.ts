/**
 * The SMTP listeners that feed inboxes: SMTP_PORT, with STARTTLS, and, when
 * SMTPS_PORT is set, a second listener with implicit TLS; the same handlers
 * on both. They only ever accept mail for live inboxes of MAIL_DOMAIN, so
 * each is a receive-only endpoint, not a relay. AUTH PLAIN and LOGIN are
 * offered as SMTP_AUTH says (auth.ts), so an application configured with a
 * username, a password and STARTTLS sends unchanged; mail without AUTH is
 * accepted as ever. The certificate is tls.ts's. Any internal failure answers
 * 451 (the sender retries later) and never takes the listener down.
 *
 * Connections are capped in total (`SMTP_MAX_CONNECTIONS`, smtp-server's
 * `maxClients`, per listener) and per client address
 * (`SMTP_MAX_CONNECTIONS_PER_ADDRESS`, checked here in onConnect): one more
 * is answered 421 and closed.
 *
 * A database that does not answer is reported to the instance's outage
 * tracker (one warning per outage, however many commands meet it), not
 * logged per command; the sender is told 451 all the same.
 */
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from "smtp-server";
import type { AddressInfo } from "node:net";
import { getLogger, withContext } from "@logtape/logtape";
import type { Config } from "../config.ts";
import type { DatabaseOutage } from "../db/outage.ts";
import type { InboxDeps } from "../inboxes/service.ts";
import { createReceiver, type Receiver } from "../messages/receive.ts";
import { type SmtpAuthDeps, smtpAuthRules } from "./auth.ts";
import { onFirstUse } from "../shared/on_first_use.ts";
import "./greeting_delay.ts";
import { smtpRefusalLogger } from "./refusal_log.ts";
import { localError, noSuchMailbox, smtpError } from "./replies.ts";
import type { TlsMaterial } from "./tls.ts";

const log = getLogger(["inbox", "smtp"]);

/** What the listener needs: the inbox rules, the AUTH rules, and where and how to listen. */
export interface SmtpDeps extends InboxDeps, SmtpAuthDeps {
  config: Pick<
    Config,
    | "mailDomain"
    | "serviceName"
    | "host"
    | "smtpPort"
    | "smtpMaxBytes"
    | "smtpGreetingDelayMs"
    | "smtpMaxConnections"
    | "smtpMaxConnectionsPerAddress"
    | "smtpAuth"
    | "smtpRequireTls"
  >;
  /** The instance's outage reporter: commands that find the database unreachable go there. */
  databaseOutage: Pick<DatabaseOutage, "absorb">;
}

/** One listener: its certificate, and whether it is the STARTTLS one (SMTP_PORT) or the implicit TLS one. */
export interface SmtpListenerOptions {
  /** What STARTTLS, or the implicit TLS handshake, serves. */
  tls: TlsMaterial;
  /** TLS from the first byte (SMTPS_PORT) instead of STARTTLS. */
  implicitTls?: boolean;
  /** Default `config.smtpPort`; 0 picks a free port. */
  port?: number;
}

/** A running SMTP listener. */
export interface SmtpServerHandle {
  port: number;
  close(): Promise<void>;
}

/** How long close() lets open connections finish before cutting them. */
const CLOSE_TIMEOUT_MS = 5_000;

/** Reads the DATA stream, keeping at most `maxBytes` (past that only counting). */
async function readMessage(stream: SMTPServerDataStream, maxBytes: number): Promise<Uint8Array | undefined> {
  const chunks: Uint8Array[] = [];
  let kept = 0;
  for await (const chunk of stream as AsyncIterable<Uint8Array>) {
    // An oversized message is read to its end (the protocol requires it) but not held in memory.
    if (kept + chunk.byteLength > maxBytes) {
      kept = maxBytes + 1;
      chunks.length = 0;
      continue;
    }
    chunks.push(chunk);
    kept += chunk.byteLength;
  }
  if (stream.sizeExceeded || kept > maxBytes) return undefined;
  const raw = new Uint8Array(kept);
  let at = 0;
  for (const chunk of chunks) {
    raw.set(chunk, at);
    at += chunk.byteLength;
  }
  return raw;
}

/**
 * The MIME parser and the search for codes and links, loaded with the first
 * message: mailparser, htmlparser2 and their dependencies added 14 MiB of RSS
 * to every start.
 */
const parser = onFirstUse(() => Promise.all([import("./parse.ts"), import("../messages/prepare.ts")]));

/** Stores a message for every accepted recipient; false when none of them still exists. */
async function ingest(receiver: Receiver, raw: Uint8Array, session: SMTPServerSession): Promise<boolean> {
  const envelopeFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : "";
  const [{ parseMessage }, { prepareMessage }] = await parser();
  const message = prepareMessage(await parseMessage(raw, envelopeFrom));
  const addresses = session.envelope.rcptTo.map((r) => r.address);
  // All recipients in one transaction, shared with whatever else arrived meanwhile (group commit).
  const stored = await receiver.receive({ addresses, message });
  log.debug("Stored a message of {size} bytes for {stored} of {recipients} recipients", {
    size: message.raw.byteLength,
    stored: stored.length,
    recipients: addresses.length,
  });
  return stored.length > 0;
}

/**
 * Open connections from a client address, counted in smtp-server's own set of
 * open connections, the one `maxClients` counts: a connection leaves it when
 * it starts closing (after QUIT or a 421), not when the client gets round to
 * closing its side, so a sender that opens a new connection per message is
 * never refused for connections it has already finished with. At most
 * `SMTP_MAX_CONNECTIONS` entries are scanned, once per new connection.
 */
function openFrom(server: SMTPServer, address: string): number {
  const connections = (server as unknown as { connections: Set<{ remoteAddress?: string }> }).connections;
  let open = 0;
  for (const c of connections) if (c.remoteAddress === address) open++;
  return open;
}

/** Starts an SMTP listener on `config.host` and the port of `listener` (by default `config.smtpPort`). */
export function startSmtpServer(deps: SmtpDeps, listener: SmtpListenerOptions): Promise<SmtpServerHandle> {
  const maxBytes = deps.config.smtpMaxBytes;
  const maxPerAddress = deps.config.smtpMaxConnectionsPerAddress;
  const implicitTls = listener.implicitTls ?? false;
  const receiver = createReceiver(deps);
  const rules = smtpAuthRules(deps);
  const server = new SMTPServer({
    name: deps.config.mailDomain,
    banner: `${deps.config.serviceName} ready`,
    // TLS by smtp-server itself: STARTTLS on this listener, or a handshake first with `secure`.
    secure: implicitTls,
    key: listener.tls.key,
    cert: listener.tls.cert,
    // smtp-server lowers the floor to TLS 1.0 for old clients; TLS 1.2 is the floor of current guidance (RFC 8996).
    minVersion: "TLSv1.2",
    // Mail without AUTH is accepted in every mode (the service is also an MX).
    authOptional: true,
    authMethods: ["PLAIN", "LOGIN"],
    // Without TLS, `any` accepts AUTH and `api-key` answers 530 (auth.ts); smtp-server's own refusal would be 538.
    allowInsecureAuth: true,
    disabledCommands: deps.config.smtpAuth === "off" ? ["AUTH"] : [],
    // RFC 3463 codes on every reply ("550 5.1.1 No such mailbox"); off by default in smtp-server.
    hideENHANCEDSTATUSCODES: false,
    // Announced in EHLO: senders that declare a larger SIZE are refused at MAIL FROM. The
    // server also answers 552 itself for a stream that runs over, whatever onData says.
    size: maxBytes,
    rejectOversized: true,
    // Every reply of 400 and up is logged at info (refusal_log.ts); nothing else smtp-server logs.
    logger: smtpRefusalLogger(log),
    closeTimeout: CLOSE_TIMEOUT_MS,
    // One connection over this is answered "421 Too many connected clients" and closed.
    maxClients: deps.config.smtpMaxConnections,
    // Read by greeting_delay.ts (smtp-server keeps unknown options as they are).
    ...{ greetingDelayMs: deps.config.smtpGreetingDelayMs },
    onConnect(session, callback) {
      const address = session.remoteAddress;
      // This connection is in the set already.
      if (openFrom(server, address) <= maxPerAddress) return callback();
      // Logged with the 421 it is answered with (refusal_log.ts).
      callback(smtpError(421, "Too many connections from your address, try again later"));
    },
    // What a session's handlers log carries its id (`smtpSession`), as its refusals do.
    onAuth(auth, session, callback) {
      withContext({ smtpSession: session.id }, () => rules.onAuth(auth, session, callback));
    },
    onMailFrom(_address, session, callback) {
      withContext(
        { smtpSession: session.id },
        () => rules.mailFromRefusal(session).then((refusal) => callback(refusal)),
      );
    },
    onRcptTo(address, session, callback) {
      withContext({ smtpSession: session.id }, () =>
        receiver.inboxOf(address.address).then(
          (inbox) => callback(inbox ? rules.rcptRefusal(session, inbox) : noSuchMailbox()),
          (err) => {
            // A database that does not answer is the outage's one warning, not a line per command.
            if (!deps.databaseOutage.absorb(err)) log.error("RCPT check failed: {error}", { error: String(err) });
            callback(localError());
          },
        ));
    },
    onData(stream, session, callback) {
      stream.on("error", () => {}); // A dropped connection ends the read below with an error.
      withContext({ smtpSession: session.id }, () =>
        readMessage(stream, maxBytes).then(async (raw) => {
          if (!raw) {
            return callback(smtpError(552, `Message exceeds the maximum size of ${maxBytes} bytes`));
          }
          callback(await ingest(receiver, raw, session) ? null : noSuchMailbox());
        }).catch((err) => {
          if (!deps.databaseOutage.absorb(err)) {
            log.error("Storing a message failed: {error}", { error: err instanceof Error ? err.stack : String(err) });
          }
          callback(localError());
        }));
    },
  });
  let listening = false;
  // Without a listener an 'error' event would throw and end the process. Until the listener
  // is open, an error is the listen failure itself, which the caller reports.
  server.on("error", (err) => {
    if (listening) log.warn("SMTP connection error: {error}", { error: String(err) });
  });

  return new Promise((resolve, reject) => {
    const onListenError = (err: Error) => reject(err);
    server.server.once("error", onListenError);
    server.listen(listener.port ?? deps.config.smtpPort, deps.config.host, () => {
      server.server.off("error", onListenError);
      listening = true;
      const port = (server.server.address() as AddressInfo).port;
      log.info("{protocol} listening on {host}:{port} for @{domain} (AUTH {auth})", {
        protocol: implicitTls ? "SMTPS (implicit TLS)" : "SMTP (STARTTLS)",
        host: deps.config.host,
        port,
        domain: deps.config.mailDomain,
        auth: deps.config.smtpAuth,
      });
      resolve({
        port,
        close: () => new Promise<void>((done) => server.close(() => done())),
      });
    });
  });
}
