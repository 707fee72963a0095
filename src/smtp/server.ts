/**
 * The SMTP listener that feeds inboxes. Plain SMTP, no AUTH and no STARTTLS:
 * it only ever accepts mail for live inboxes of MAIL_DOMAIN, so it is a
 * receive-only endpoint, not a relay. Any internal failure answers 451 (the
 * sender retries later) and never takes the listener down.
 *
 * Connections are capped in total (`SMTP_MAX_CONNECTIONS`, smtp-server's
 * `maxClients`) and per client address (`SMTP_MAX_CONNECTIONS_PER_ADDRESS`,
 * checked here in onConnect): one more is answered 421 and closed.
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
import { createReceiver, prepareMessage, type Receiver } from "../messages/receive.ts";
import "./greeting_delay.ts";
import { parseMessage } from "./parse.ts";
import { smtpRefusalLogger } from "./refusal_log.ts";

const log = getLogger(["inbox", "smtp"]);

/** What the listener needs: the inbox rules, and where and how to listen. */
export interface SmtpDeps extends InboxDeps {
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
  >;
  /** The instance's outage reporter: commands that find the database unreachable go there. */
  databaseOutage: Pick<DatabaseOutage, "absorb">;
}

/** A running SMTP listener. */
export interface SmtpServerHandle {
  port: number;
  close(): Promise<void>;
}

/** How long close() lets open connections finish before cutting them. */
const CLOSE_TIMEOUT_MS = 5_000;

/** An error smtp-server answers with its `responseCode` (enhanced status code added by the server). */
function smtpError(responseCode: number, message: string): Error {
  return Object.assign(new Error(message), { responseCode });
}

const noSuchMailbox = () => smtpError(550, "No such mailbox");
const localError = () => smtpError(451, "Local error in processing, try again later");

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

/** Stores a message for every accepted recipient; false when none of them still exists. */
async function ingest(receiver: Receiver, raw: Uint8Array, session: SMTPServerSession): Promise<boolean> {
  const envelopeFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : "";
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

/** Starts the SMTP listener on `config.host`:`config.smtpPort` (0 picks a free port). */
export function startSmtpServer(deps: SmtpDeps): Promise<SmtpServerHandle> {
  const maxBytes = deps.config.smtpMaxBytes;
  const maxPerAddress = deps.config.smtpMaxConnectionsPerAddress;
  const receiver = createReceiver(deps);
  const server = new SMTPServer({
    name: deps.config.mailDomain,
    banner: `${deps.config.serviceName} ready`,
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
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
    onRcptTo(address, session, callback) {
      withContext({ smtpSession: session.id }, () =>
        receiver.inboxOf(address.address).then(
          (inbox) => callback(inbox ? null : noSuchMailbox()),
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
    server.listen(deps.config.smtpPort, deps.config.host, () => {
      server.server.off("error", onListenError);
      listening = true;
      const port = (server.server.address() as AddressInfo).port;
      log.info("SMTP listening on {host}:{port} for @{domain}", {
        host: deps.config.host,
        port,
        domain: deps.config.mailDomain,
      });
      resolve({
        port,
        close: () => new Promise<void>((done) => server.close(() => done())),
      });
    });
  });
}
