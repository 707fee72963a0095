/**
 * The certificate the SMTP listeners serve (STARTTLS on SMTP_PORT, implicit
 * TLS on SMTPS_PORT): the operator's (SMTP_TLS_CERT and SMTP_TLS_KEY, read at
 * start), or a self-signed one for MAIL_DOMAIN, `localhost` and `127.0.0.1`.
 *
 * The self-signed certificate is kept in DATA_DIR on the embedded database
 * (`smtp-tls.pem`, its key in `smtp-tls.key`), so that a client told to trust
 * that file keeps trusting it across restarts; it is made again when it is
 * missing, unreadable, not for MAIL_DOMAIN, or within RENEW_BEFORE_DAYS of
 * its end. With DATABASE_URL there is no directory of the service's own (and
 * several instances share nothing but the database), so each start makes one
 * in memory: clients that check certificates then need SMTP_TLS_CERT/KEY.
 *
 * node:crypto makes the key pair but cannot write a certificate. The
 * certificate is built and signed with node-forge: one package with no
 * dependencies, 1.8 MB installed, maintained (digitalBazaar; releases through
 * 2026), where `selfsigned` 5 brings 24 packages (9 MB) and `@peculiar/x509` 20
 * (4.9 MB) for the same few calls. forge only signs with RSA, so the key is
 * RSA 2048, made by node:crypto (forge's own key generation is pure JavaScript
 * and takes seconds).
 */
import { createPrivateKey, generateKeyPair, X509Certificate } from "node:crypto";
import { join } from "node:path";
import { promisify } from "node:util";
import { getLogger } from "@logtape/logtape";
import type { Config } from "../config.ts";
import { onDataDir } from "../db/data_dir.ts";
import { ConfigError } from "../shared/config_error.ts";
import { fileErrorCause } from "../shared/file_error.ts";

const log = getLogger(["inbox", "smtp"]);

/** A private key and a certificate (or chain) in PEM, as smtp-server's `key` and `cert` options take them. */
export interface TlsMaterial {
  key: string;
  cert: string;
}

/** The certificate of the SMTP listeners and where it came from. */
export interface SmtpTls extends TlsMaterial {
  /**
   * `files`: SMTP_TLS_CERT/KEY; `kept`: the self-signed one in DATA_DIR from an
   * earlier start; `made`: a self-signed one made now into DATA_DIR; `memory`: a
   * self-signed one made now and kept nowhere (DATABASE_URL).
   */
  source: "files" | "kept" | "made" | "memory";
  /** The certificate's file (SMTP_TLS_CERT, or DATA_DIR/smtp-tls.pem); none for `memory`. */
  certPath?: string;
  /** The end of the certificate's validity. */
  validTo: Date;
}

export const CERT_FILE = "smtp-tls.pem";
export const KEY_FILE = "smtp-tls.key";
/** How long a self-signed certificate is valid. */
const VALIDITY_DAYS = 365;
/**
 * A kept certificate with less than this left is replaced at start: the
 * certificate is read once, so one that ends a few days into a long run would
 * expire while served.
 */
const RENEW_BEFORE_DAYS = 30;
const DAY_MS = 86_400_000;

/** The few calls of node-forge this module makes (the package ships no types). */
interface Forge {
  pki: {
    createCertificate(): ForgeCertificate;
    publicKeyFromPem(pem: string): unknown;
    privateKeyFromPem(pem: string): unknown;
    certificateToPem(cert: ForgeCertificate): string;
  };
  md: { sha256: { create(): unknown } };
}

interface ForgeCertificate {
  publicKey: unknown;
  serialNumber: string;
  validity: { notBefore: Date; notAfter: Date };
  setSubject(attributes: { name: string; value: string }[]): void;
  setIssuer(attributes: { name: string; value: string }[]): void;
  setExtensions(extensions: Record<string, unknown>[]): void;
  sign(key: unknown, digest: unknown): void;
}

const generateRsaKeyPair = promisify(generateKeyPair);

/** An IPv4 or IPv6 literal, which a certificate names as an IP address rather than a DNS name. */
const isIpLiteral = (name: string) => /^\d{1,3}(\.\d{1,3}){3}$/.test(name) || name.includes(":");

/**
 * A self-signed certificate for `domain`, `localhost` and `127.0.0.1`, valid
 * from an hour before `now` (clients whose clocks run a little behind) for
 * VALIDITY_DAYS.
 */
export async function selfSignedCertificate(domain: string, now = new Date()): Promise<TlsMaterial> {
  // Loaded here, not at start: a start that finds its certificate never needs node-forge (4 MiB of RSS).
  const forge = (await import("node-forge")).default as unknown as Forge;
  const { privateKey, publicKey } = await generateRsaKeyPair("rsa", { modulusLength: 2048 });
  const key = privateKey.export({ type: "pkcs8", format: "pem" }) as string;
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKey.export({ type: "spki", format: "pem" }) as string);
  // 16 random bytes, the first below 0x80: a positive serial number (RFC 5280 4.1.2.2).
  const serial = crypto.getRandomValues(new Uint8Array(16));
  serial[0] = serial[0]! & 0x7f;
  cert.serialNumber = serial.toHex();
  cert.validity.notBefore = new Date(now.getTime() - 3_600_000);
  cert.validity.notAfter = new Date(now.getTime() + VALIDITY_DAYS * DAY_MS);
  const subject = [{ name: "commonName", value: domain }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  const names = [...new Set([domain, "localhost", "127.0.0.1"])];
  cert.setExtensions([
    { name: "basicConstraints", cA: false, critical: true },
    { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
    { name: "extKeyUsage", serverAuth: true },
    // Types 7 and 2 of GeneralName: iPAddress, dNSName.
    { name: "subjectAltName", altNames: names.map((n) => isIpLiteral(n) ? { type: 7, ip: n } : { type: 2, value: n }) },
    { name: "subjectKeyIdentifier" },
  ]);
  cert.sign(forge.pki.privateKeyFromPem(key), forge.md.sha256.create());
  return { key, cert: forge.pki.certificateToPem(cert) };
}

/** The end of a PEM certificate's validity. */
function validToOf(cert: X509Certificate): Date {
  return new Date(cert.validTo);
}

/** SMTP_TLS_CERT and SMTP_TLS_KEY, read and checked; each problem is a refusal naming its variable. */
async function readConfigured(certPath: string, keyPath: string, now: Date): Promise<SmtpTls> {
  const read = async (variable: string, path: string) => {
    try {
      return await Deno.readTextFile(path);
    } catch (err) {
      throw new ConfigError(`${variable}: cannot read ${path} (${fileErrorCause(err)})`);
    }
  };
  const cert = await read("SMTP_TLS_CERT", certPath);
  const key = await read("SMTP_TLS_KEY", keyPath);
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch {
    throw new ConfigError(`SMTP_TLS_CERT: ${certPath} does not hold a certificate in PEM`);
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch {
    throw new ConfigError(`SMTP_TLS_KEY: ${keyPath} does not hold an unencrypted private key in PEM`);
  }
  if (!x509.checkPrivateKey(privateKey)) {
    throw new ConfigError(`SMTP_TLS_KEY: ${keyPath} is not the key of the certificate in ${certPath}`);
  }
  const validTo = validToOf(x509);
  log.info("SMTP serves the certificate of {path}, valid until {validTo}", {
    path: certPath,
    validTo: validTo.toISOString(),
  });
  if (validTo <= now) {
    // Served all the same: mail without TLS, or from clients that do not check, still arrives.
    log.warn("The SMTP certificate in {path} expired on {validTo}: renew it and restart", {
      path: certPath,
      validTo: validTo.toISOString(),
    });
  }
  return { key, cert, source: "files", certPath, validTo };
}

/** Why a kept certificate cannot be served again, or undefined when it can. */
function replaceReason(kept: TlsMaterial, domain: string, now: Date): string | undefined {
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(kept.cert);
    if (!x509.checkPrivateKey(createPrivateKey(kept.key))) return "its key file holds another key";
  } catch {
    return "it could not be read";
  }
  const validTo = validToOf(x509);
  if (validTo.getTime() - now.getTime() < RENEW_BEFORE_DAYS * DAY_MS) {
    return `it ends on ${validTo.toISOString()}`;
  }
  if (!x509.checkHost(domain)) return `it is not for ${domain}`;
  return undefined;
}

/** The self-signed certificate kept in DATA_DIR, made (again) when it cannot be served. */
async function keptInDataDir(dataDir: string, domain: string, now: Date): Promise<SmtpTls> {
  const certPath = join(dataDir, CERT_FILE);
  const keyPath = join(dataDir, KEY_FILE);
  return await onDataDir(dataDir, async () => {
    let reason = "there was none";
    try {
      const kept = { cert: await Deno.readTextFile(certPath), key: await Deno.readTextFile(keyPath) };
      const why = replaceReason(kept, domain, now);
      if (!why) {
        const validTo = validToOf(new X509Certificate(kept.cert));
        log.info("SMTP serves the self-signed certificate kept in {path}, valid until {validTo}", {
          path: certPath,
          validTo: validTo.toISOString(),
        });
        return { ...kept, source: "kept", certPath, validTo };
      }
      reason = why;
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
    const made = await selfSignedCertificate(domain, now);
    await Deno.mkdir(dataDir, { recursive: true });
    // The key first: a start cut short between the two writes finds a pair that does not match, and makes another.
    await Deno.writeTextFile(keyPath, made.key, { mode: 0o600 });
    await Deno.writeTextFile(certPath, made.cert);
    log.info("Made a self-signed SMTP certificate for {domain} into {path} ({reason}): clients trust it by that file", {
      domain,
      path: certPath,
      reason,
    });
    return { ...made, source: "made", certPath, validTo: validToOf(new X509Certificate(made.cert)) };
  });
}

/** The certificate the SMTP listeners serve, as the configuration says where it comes from. */
export async function resolveSmtpTls(
  config: Pick<Config, "smtpTlsCert" | "smtpTlsKey" | "databaseUrl" | "dataDir" | "mailDomain">,
  now = new Date(),
): Promise<SmtpTls> {
  // The configuration refuses one without the other.
  if (config.smtpTlsCert && config.smtpTlsKey) return await readConfigured(config.smtpTlsCert, config.smtpTlsKey, now);
  if (!config.databaseUrl) return await keptInDataDir(config.dataDir, config.mailDomain, now);
  const made = await selfSignedCertificate(config.mailDomain, now);
  log.info(
    "Made a self-signed SMTP certificate for {domain} for this start only (with DATABASE_URL each instance makes " +
      "its own): set SMTP_TLS_CERT and SMTP_TLS_KEY for one that clients can be told to trust",
    { domain: config.mailDomain },
  );
  return { ...made, source: "memory", validTo: validToOf(new X509Certificate(made.cert)) };
}
