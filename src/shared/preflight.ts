/**
 * What start-up checks before it opens anything: the files that settings
 * name, and that HOST resolves to an address of this machine on which PORT,
 * SMTP_PORT and SMTPS_PORT can be opened. A bad value is refused here, in the time it
 * takes to read the configuration, rather than after the database has been
 * opened and migrated.
 */
import type { Config } from "../config.ts";
import { checkListeners } from "./listen_error.ts";
import { readCertificates } from "./setting_file.ts";

/** What the checks read, for start-up to use rather than read again. */
export interface CheckedSettings {
  /** The PEM text of WEBHOOK_CA_CERTS, if set. */
  caPem: string | undefined;
}

/** Checks the settings that need no database; throws a ConfigError naming the variable. */
export async function checkSettings(
  config: Pick<Config, "webhookCaCerts" | "host" | "port" | "smtpPort" | "smtpsPort">,
): Promise<CheckedSettings> {
  const caPem = config.webhookCaCerts ? await readCertificates("WEBHOOK_CA_CERTS", config.webhookCaCerts) : undefined;
  checkListeners(config.host, [
    ["PORT", config.port],
    ["SMTP_PORT", config.smtpPort],
    ...(config.smtpsPort === undefined ? [] : [["SMTPS_PORT", config.smtpsPort] as const]),
  ]);
  return { caPem };
}
