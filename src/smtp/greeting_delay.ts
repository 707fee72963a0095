/**
 * The pause before the SMTP greeting. smtp-server waits a fixed 100 ms after
 * accepting a connection before it greets, to refuse "early talkers" (spam
 * software that sends before the greeting) with 421. For this service, whose
 * senders are test suites opening a new connection per message, that pause is
 * most of the time a message takes; so the pause is the setting
 * SMTP_GREETING_DELAY_MS (default 0: greet at once), read per server from its
 * `greetingDelayMs` option.
 *
 * smtp-server offers no option for it, so this replaces the one method that
 * arms the timer, `SMTPConnection.prototype.init`, with the same steps and
 * the configured delay (and the client's address given to the logger before
 * a refusal over SMTP_MAX_CONNECTIONS, so that the refusal's line names it).
 * It is installed once, when this module loads. The SMTP tests hold the
 * behaviour (an early talker is refused with a delay, greeted without one),
 * and tests/smtp/greeting_delay_test.ts compares smtp-server's own `init`
 * with the one this copies, so an upgrade that changes it fails there
 * (docs/workarounds.md).
 */
import { SMTPConnection } from "smtp-server/lib/smtp-connection.js";

/** The parts of smtp-server's connection that `init` uses (internal, untyped). */
interface ConnectionInternals {
  _server: {
    options: { maxClients?: number; greetingDelayMs?: number };
    connections: Set<unknown>;
    logger: { info(entry: Record<string, unknown>, message: string, ...args: unknown[]): void };
  };
  id: string;
  remoteAddress: string;
  _setListeners(callback: () => void): void;
  send(code: number, message: string, context?: unknown): void;
  connectionReady(): void;
  name: string;
}

const prototype = (SMTPConnection as unknown as { prototype: ConnectionInternals & { init(): void } }).prototype;

/** smtp-server's own `init`, as this module found it (its source is compared with the one copied here). */
export const replacedInit: () => void = prototype.init;

prototype.init = function (this: ConnectionInternals) {
  this._setListeners(() => {
    const options = this._server.options;
    if (options.maxClients && this._server.connections.size > options.maxClients) {
      // The address, for the refusal's log line (refusal_log.ts): no other line named it yet.
      this._server.logger.info({ tnx: "connection", cid: this.id, host: this.remoteAddress }, "Refused %s", this.id);
      return this.send(421, this.name + " Too many connected clients, try again in a moment", false);
    }
    const delay = options.greetingDelayMs ?? 0;
    if (delay <= 0) return this.connectionReady();
    // Unreferenced, as in smtp-server: a pending greeting does not keep the process alive.
    Deno.unrefTimer(setTimeout(() => this.connectionReady(), delay));
  });
};
