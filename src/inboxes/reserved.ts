/**
 * Role mailboxes no account may claim as an inbox. Whoever reads
 * `admin@MAIL_DOMAIN` or `postmaster@MAIL_DOMAIN` can get a TLS certificate
 * for the domain, or receive its abuse reports and bounces: these addresses
 * belong to the operator of the domain, never to a tenant.
 */

/**
 * Sources:
 * - CA/Browser Forum Baseline Requirements 3.2.2.4.4 ("Constructed Email to
 *   Domain Contact"): a CA may validate a domain by mailing `admin`,
 *   `administrator`, `webmaster`, `hostmaster` or `postmaster` at it.
 * - RFC 2142 (mailbox names for common services, roles and functions): `info`,
 *   `marketing`, `sales`, `support`, `abuse`, `noc`, `security`, `postmaster`,
 *   `hostmaster`, `usenet`, `news`, `webmaster`, `www`, `uucp`, `ftp`.
 * - RFC 5321 4.5.1 and RFC 3834: `postmaster`, `mailer-daemon`; addresses that
 *   announce they are unattended: `noreply`, `no-reply`.
 * - Addresses CAs accepted for domain validation before the Baseline
 *   Requirements (`root`, `ssladmin`, `ssladministrator`, `sslwebmaster`,
 *   `it`, `is`, `mis`), and the one of the 2008 certificate for
 *   login.live.com (`sslcertificates`). The 2015 certificate for live.fi was
 *   obtained by registering `hostmaster` at its free mail service.
 * - Unix system accounts whose mail goes to the operator: `nobody`,
 *   `operator`, `sysadmin`, `daemon`.
 */
export const RESERVED_LOCAL_PARTS: ReadonlySet<string> = new Set([
  // CA/B Baseline Requirements 3.2.2.4.4
  "admin",
  "administrator",
  "webmaster",
  "hostmaster",
  "postmaster",
  // RFC 2142
  "info",
  "marketing",
  "sales",
  "support",
  "abuse",
  "noc",
  "security",
  "usenet",
  "news",
  "www",
  "uucp",
  "ftp",
  // RFC 5321 / RFC 3834
  "mailer-daemon",
  "noreply",
  "no-reply",
  // Pre-Baseline-Requirements CA validation addresses
  "root",
  "ssladmin",
  "ssladministrator",
  "sslwebmaster",
  "it",
  "is",
  "mis",
  "sslcertificates",
  // System accounts
  "nobody",
  "operator",
  "sysadmin",
  "daemon",
]);

/**
 * Whether a local part names a role mailbox: compared without letter case,
 * and without a `+tag` (subaddress), so `Postmaster` and `postmaster+x` are
 * reserved too. (The API's local-part pattern admits neither uppercase nor
 * `+`; the check does not rely on that.)
 */
export function isReservedLocalPart(localPart: string): boolean {
  const lower = localPart.toLowerCase();
  const plus = lower.indexOf("+");
  return RESERVED_LOCAL_PARTS.has(plus >= 0 ? lower.slice(0, plus) : lower);
}
