/**
 * A recipient address as SMTP gives it, read as an inbox's: `<localPart>@`
 * MAIL_DOMAIN, or `<localPart>+<tag>@` MAIL_DOMAIN for the same inbox
 * (sub-addressing), so that one inbox serves a whole CI run and each test
 * signs up as `ci+<test-id>@...` without an API call. The tag is 1 to 64
 * letters, digits, `.`, `_` or `-`, kept in its case; the local part and the
 * domain are matched in any case.
 */
import { LOCAL_PART_PATTERN } from "./schemas.ts";

/** A recipient of an inbox: the inbox's address, and the address the message is kept as sent to. */
export interface Recipient {
  /** The inbox's address, lowercase: `<localPart>@<domain>`. */
  inbox: string;
  /** The address as the message keeps it: the inbox's, with the tag as it was written. */
  to: string;
}

const TAG = /^[A-Za-z0-9._-]{1,64}$/;

/** The inbox a recipient address is for, or undefined when it is not an address an inbox can have. */
export function recipientOf(address: string, mailDomain: string): Recipient | undefined {
  const at = address.lastIndexOf("@");
  if (at <= 0 || address.slice(at + 1).toLowerCase() !== mailDomain) return undefined;
  const local = address.slice(0, at);
  const plus = local.indexOf("+");
  const base = (plus < 0 ? local : local.slice(0, plus)).toLowerCase();
  if (!LOCAL_PART_PATTERN.test(base)) return undefined;
  const inbox = `${base}@${mailDomain}`;
  if (plus < 0) return { inbox, to: inbox };
  // A second `+` is not part of a tag: refused, rather than read as one of two.
  const tag = local.slice(plus + 1);
  if (!TAG.test(tag)) return undefined;
  return { inbox, to: `${base}+${tag}@${mailDomain}` };
}
