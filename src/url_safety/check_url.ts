/**
 * SSRF checks for webhook URLs: at registration (checkWebhookUrl) and at
 * delivery (resolveSafeAddresses).
 *
 * Numeric disguises of IP addresses (decimal, octal, hex, short forms,
 * full-width dots, percent-encoding) are left to the WHATWG URL parser, which
 * turns all of them into a dotted quad before anything is classified here.
 */
import { classifyAddress, isBlockedHostname, isIpLiteral } from "./address.ts";
import { guardResolver, type Resolver } from "./resolver.ts";

export type UrlCheck =
  | { ok: true; url: URL; normalized: string }
  | { ok: false; kind: "invalid"; reason: string }
  | { ok: false; kind: "unsafe"; reason: string };

export interface UrlCheckOptions {
  resolver: Resolver;
  /** Exact `url.hostname` values exempt from address checks (IPv6 in brackets). */
  trustedHosts: ReadonlySet<string>;
}

type Syntax = { ok: true; url: URL } | {
  ok: false;
  kind: "invalid";
  reason: string;
};

function invalid(
  reason: string,
): { ok: false; kind: "invalid"; reason: string } {
  return { ok: false, kind: "invalid", reason };
}

function unsafe(reason: string): { ok: false; kind: "unsafe"; reason: string } {
  return { ok: false, kind: "unsafe", reason };
}

function accepted(url: URL): UrlCheck {
  return { ok: true, url, normalized: url.href };
}

function parseSyntax(input: string): Syntax {
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    return invalid("Not a valid URL");
  }
  if (url.protocol !== "https:") {
    return invalid(`Scheme must be https, not ${url.protocol.slice(0, -1)}`);
  }
  // Credentials in a webhook URL would be sent to whoever the host turns out to be.
  if (url.username !== "" || url.password !== "") {
    return invalid("URL must not contain a user name or password");
  }
  if (url.hostname === "") return invalid("URL has no host");
  return { ok: true, url };
}

function hostVerdict(
  hostname: string,
): { ok: true } | { ok: false; reason: string } {
  if (isIpLiteral(hostname)) {
    const verdict = classifyAddress(hostname);
    return verdict.safe ? { ok: true } : { ok: false, reason: `Unsafe host: ${verdict.reason}` };
  }
  if (isBlockedHostname(hostname)) {
    return {
      ok: false,
      reason: `Host name ${hostname} is not publicly resolvable`,
    };
  }
  return { ok: true };
}

/**
 * Registration-time check: syntax, https, no userinfo, then (unless the host
 * is trusted) IP literals and blocked names without DNS, and other names
 * through DNS; a name that does not resolve is accepted.
 */
export async function checkWebhookUrl(
  input: string,
  opts: UrlCheckOptions,
): Promise<UrlCheck> {
  const syntax = parseSyntax(input);
  if (!syntax.ok) return syntax;
  const { url } = syntax;
  if (opts.trustedHosts.has(url.hostname)) return accepted(url);
  const host = hostVerdict(url.hostname);
  if (!host.ok) return unsafe(host.reason);
  if (isIpLiteral(url.hostname)) return accepted(url);
  // An unresolvable name is let through: DNS may change before the first
  // delivery, and resolveSafeAddresses checks again then.
  const addresses = await guardResolver(opts.resolver)(url.hostname);
  for (const address of addresses) {
    const verdict = classifyAddress(address);
    if (!verdict.safe) {
      return unsafe(
        `Host ${url.hostname} resolves to an unsafe address: ${verdict.reason}`,
      );
    }
  }
  return accepted(url);
}

/**
 * Why a delivery-time check refused a host: `dns` when the name did not
 * resolve (or resolving timed out), `unsafe` when it is or resolves to an
 * address deliveries may not reach.
 */
export type AddressRefusal = { ok: false; kind: "dns" | "unsafe"; reason: string };

/** Delivery-time check: resolves a URL host and returns its addresses only if every one is safe. */
export async function resolveSafeAddresses(
  hostname: string,
  opts: UrlCheckOptions,
): Promise<{ ok: true; addresses: string[] } | AddressRefusal> {
  const trusted = opts.trustedHosts.has(hostname);
  if (isIpLiteral(hostname)) {
    const bare = hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
    if (trusted) return { ok: true, addresses: [bare] };
    const verdict = classifyAddress(hostname);
    return verdict.safe
      ? { ok: true, addresses: [bare] }
      : { ok: false, kind: "unsafe", reason: `Unsafe host: ${verdict.reason}` };
  }
  if (!trusted && isBlockedHostname(hostname)) {
    return {
      ok: false,
      kind: "unsafe",
      reason: `Host name ${hostname} is not publicly resolvable`,
    };
  }
  const addresses = [...new Set(await guardResolver(opts.resolver)(hostname))];
  if (addresses.length === 0) {
    return { ok: false, kind: "dns", reason: `Could not resolve host: ${hostname}` };
  }
  if (!trusted) {
    for (const address of addresses) {
      const verdict = classifyAddress(address);
      if (!verdict.safe) {
        return {
          ok: false,
          kind: "unsafe",
          reason: `Host ${hostname} resolves to an unsafe address: ${verdict.reason}`,
        };
      }
    }
  }
  return { ok: true, addresses };
}
