/**
 * Files that settings name (WEBHOOK_CA_CERTS), read at start-up: a file that
 * cannot be read, or does not hold what the setting needs, is a start-up
 * refusal naming the variable rather than a failure later (a stack trace, or
 * every delivery failing with a TLS error).
 */
import { ConfigError } from "./config_error.ts";
import { errorCode } from "./error_code.ts";

const CAUSES: Record<string, string> = {
  ENOENT: "no such file",
  EISDIR: "it is a directory",
  ENOTDIR: "a part of the path is a file, not a directory",
  EACCES: "permission denied",
  EPERM: "permission denied",
  ELOOP: "too many symbolic links",
  ENAMETOOLONG: "the path is too long",
};

/** The text of the file `variable` names; a ConfigError naming the variable and the cause when it cannot be read. */
export async function readSettingFile(variable: string, path: string): Promise<string> {
  try {
    return await Deno.readTextFile(path);
  } catch (err) {
    const code = errorCode(err);
    const cause = (code === undefined ? undefined : CAUSES[code]) ?? (err instanceof Error ? err.message : String(err));
    throw new ConfigError(`${variable}: cannot read ${path} (${cause}): give the path of a readable file, or unset it`);
  }
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/;

/**
 * The PEM certificates of the file `variable` names, checked the way the
 * HTTP client will load them: a file with no certificate (which the client
 * would silently ignore) or a damaged one is refused.
 */
export async function readCertificates(variable: string, path: string): Promise<string> {
  const pem = await readSettingFile(variable, path);
  const refuse = (what: string) =>
    new ConfigError(`${variable}: ${path} ${what}: give a PEM file of CA certificates, or unset it`);
  if (!PEM_CERTIFICATE.test(pem)) throw refuse("holds no PEM certificate (-----BEGIN CERTIFICATE-----)");
  try {
    Deno.createHttpClient({ caCerts: [pem] }).close();
  } catch (err) {
    throw refuse(`holds a certificate that cannot be read (${err instanceof Error ? err.message : String(err)})`);
  }
  return pem;
}
