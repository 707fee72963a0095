/**
 * Every SMTP refusal logged at info: an unknown recipient (550), a message too
 * large (552), a connection over a limit or an early talker (421), a syntax
 * error (5xx), a local failure (451). smtp-server sends every reply through
 * one method that logs it to the bunyan-style logger of its `logger` option
 * (`tnx: "send"`, at debug); this is that logger, keeping only replies of
 * 400 and up. Each line names the SMTP session (`smtpSession`, the id the
 * listener's other lines carry too), the client address and the command that
 * was refused, so one sender's trouble can be followed through the log.
 *
 * Nothing else smtp-server logs (each command, connection chatter) is kept:
 * only the last command of a session and its address, until it closes.
 *
 * The entries' fields (`tnx`, `cid`, `host`, the reply as first argument) are
 * not documented by smtp-server: docs/workarounds.md lists this reliance.
 */
import type { Logger } from "@logtape/logtape";

/** A bunyan-style logger as smtp-server calls it: `(entry, message, ...args)` per level. */
type LogMethod = (entry: Record<string, unknown>, message?: string, ...args: unknown[]) => void;
export type SmtpServerLogger = Record<"trace" | "debug" | "info" | "warn" | "error" | "fatal", LogMethod>;

/** What is known of an open session. */
interface SessionTrace {
  address?: string;
  command?: string;
}

/** Sessions followed at most; past it the oldest is forgotten (a close that was never logged cannot leak). */
const MAX_SESSIONS = 10_000;
/** A command line is cut to this many characters (a client chooses what it sends). */
const MAX_COMMAND_CHARS = 200;

/** smtp-server's `logger`, writing its refusals to `log`. */
export function smtpRefusalLogger(log: Logger): SmtpServerLogger {
  const sessions = new Map<string, SessionTrace>();
  const traceOf = (cid: string): SessionTrace => {
    let trace = sessions.get(cid);
    if (!trace) {
      if (sessions.size >= MAX_SESSIONS) sessions.delete(sessions.keys().next().value!);
      sessions.set(cid, trace = {});
    }
    return trace;
  };

  const record: LogMethod = (entry, _message, ...args) => {
    const cid = typeof entry.cid === "string" ? entry.cid : undefined;
    if (!cid) return;
    switch (entry.tnx) {
      case "connection":
        if (typeof entry.host === "string") traceOf(cid).address = entry.host;
        return;
      case "command":
        // `C: <line>`, credentials already redacted by smtp-server.
        traceOf(cid).command = String(args[0] ?? entry.command ?? "").slice(0, MAX_COMMAND_CHARS);
        return;
      case "data":
        // The end of a message: what the reply to it answers.
        traceOf(cid).command = typeof entry.bytes === "number" ? `DATA (${entry.bytes} bytes)` : "DATA";
        return;
      case "send": {
        const reply = String(args[0] ?? "");
        if (!/^[45]\d\d/.test(reply)) return;
        const trace = sessions.get(cid);
        log.info("SMTP refused {command}: {reply}", {
          smtpSession: cid,
          address: trace?.address ?? null,
          command: trace?.command ?? "(connection)",
          reply,
        });
        return;
      }
      case "close":
        sessions.delete(cid);
        return;
    }
  };
  return { trace: record, debug: record, info: record, warn: record, error: record, fatal: record };
}
