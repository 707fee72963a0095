/**
 * A listener that cannot open (HTTP on PORT, SMTP on SMTP_PORT and
 * SMTPS_PORT) as a start-up refusal: one line naming the variable and the
 * cause.
 */
import { ConfigError } from "./config_error.ts";
import { errorCode } from "./error_code.ts";

/** The refusal for `err` from listening on `host`:`port` as set by `variable`, if it is a known cause. */
export function listenRefusal(
  err: unknown,
  variable: "PORT" | "SMTP_PORT" | "SMTPS_PORT",
  host: string,
  port: number,
): ConfigError | undefined {
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
      return new ConfigError(
        `HOST: ${host} is not an address of this machine, so ${variable} ${port} cannot be opened on it: set HOST to one (0.0.0.0 for all)`,
      );
    default:
      return undefined;
  }
}
