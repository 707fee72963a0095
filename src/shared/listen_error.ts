/**
 * A listener that cannot open (HTTP on PORT, SMTP on SMTP_PORT and SMTPS_PORT) as a start-up
 * refusal: one line naming the variable and the cause. The same refusals come
 * from the trial binds before the database is opened (`checkListeners`) and
 * from the real binds after it.
 */
import { ConfigError } from "./config_error.ts";
import { errorCode } from "./error_code.ts";

/** Variables that choose a listening port. */
export type PortVariable = "PORT" | "SMTP_PORT" | "SMTPS_PORT";

/** What to tell about a HOST that is no address of this machine. */
function notLocal(host: string, variable: PortVariable, port: number): ConfigError {
  return new ConfigError(
    `HOST: ${host} is not an address of this machine, so ${variable} ${port} cannot be opened on it: set HOST to one (0.0.0.0 for all)`,
  );
}

/** Whether `err` says that a host name does not resolve (Deno's listen gives no code, node:net ENOTFOUND). */
function isUnresolved(err: unknown): boolean {
  const code = errorCode(err);
  if (code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "EAI_NONAME") return true;
  return err instanceof Error && /failed to lookup address|invalid host/i.test(err.message);
}

/** The refusal for `err` from listening on `host`:`port` as set by `variable`, if it is a known cause. */
export function listenRefusal(
  err: unknown,
  variable: PortVariable,
  host: string,
  port: number,
): ConfigError | undefined {
  if (isUnresolved(err)) {
    return new ConfigError(
      `HOST: ${host} does not resolve to an address: set HOST to an address of this machine (0.0.0.0 for all, 127.0.0.1 for this machine only) or a name that resolves to one`,
    );
  }
  // Deno's errors and node:net's carry the same code.
  switch (errorCode(err)) {
    case "EADDRINUSE":
      return new ConfigError(
        `${variable}: port ${port} on ${host} is already in use: stop the process that holds it, or set ${variable} to a free port`,
      );
    case "EACCES":
    case "EPERM":
      return new ConfigError(
        `${variable}: not allowed to listen on port ${port} on ${host}: set ${variable} to a port above 1023`,
      );
    case "EADDRNOTAVAIL":
    // node:net in Deno reports an address of another machine as EINVAL.
    case "EINVAL":
      return notLocal(host, variable, port);
    default:
      return undefined;
  }
}

/**
 * Opens and closes each listener's port on `host`, so that a HOST that does
 * not resolve or is not local, and a port that is taken or not allowed, are
 * refused before the database is opened or migrated (port 0, any free port,
 * still checks HOST). Any other failure is refused too, with its message: a
 * setting, not the code, is what stops the start here.
 */
export function checkListeners(host: string, ports: ReadonlyArray<readonly [PortVariable, number]>): void {
  const opened: Deno.Listener[] = [];
  try {
    for (const [variable, port] of ports) {
      try {
        opened.push(Deno.listen({ hostname: host, port }));
      } catch (err) {
        throw listenRefusal(err, variable, host, port) ?? new ConfigError(
          `${variable}: cannot listen on port ${port} on ${host} (${
            err instanceof Error ? err.message : String(err)
          }): check HOST and ${variable}`,
        );
      }
    }
  } finally {
    for (const listener of opened) listener.close();
  }
}
