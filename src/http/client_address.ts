/**
 * Who the client is, for per-address limits (failed logins, registrations):
 * the address of the TCP connection. `X-Forwarded-For` is believed only when
 * the connection comes from a configured proxy (`TRUSTED_PROXIES`), since
 * anyone can send the header; then the client is the nearest address in it
 * that is not itself a trusted proxy.
 *
 * IPv6 clients are counted per /64, the block one subscriber usually holds,
 * so rotating through one's own addresses does not reset a limit.
 */
import type { Context } from "hono";
import ipaddr from "ipaddr.js";

/** The one bucket of requests with no remote address (in-process `app.request()`, Unix sockets). */
export const UNKNOWN_ADDRESS = "unknown";

type IP = ipaddr.IPv4 | ipaddr.IPv6;

/** A trusted proxy entry as `TRUSTED_PROXIES` holds it: an address or a CIDR range. */
export function parseProxyRange(entry: string): [IP, number] | undefined {
  if (ipaddr.isValidCIDR(entry)) return ipaddr.parseCIDR(entry);
  if (!ipaddr.isValid(entry)) return undefined;
  const ip = ipaddr.parse(entry);
  return [ip, ip.kind() === "ipv4" ? 32 : 128];
}

/** Builds the reader of a request's client address, trusting `X-Forwarded-For` only from `trustedProxies`. */
export function clientAddressReader(trustedProxies: Iterable<string>): (c: Context) => string {
  const ranges = [...trustedProxies].map((entry) => {
    const range = parseProxyRange(entry);
    if (!range) throw new Error(`not an address or CIDR range: ${entry}`);
    return range;
  });
  const trusted = (ip: IP) =>
    ranges.some(([net, bits]) => {
      // An IPv4 range also covers the IPv4-mapped IPv6 form of its addresses.
      const candidate = ip.kind() === "ipv6" && (ip as ipaddr.IPv6).isIPv4MappedAddress()
        ? (ip as ipaddr.IPv6).toIPv4Address()
        : ip;
      return net.kind() === candidate.kind() && candidate.match(net, bits);
    });

  return (c) => {
    let ip = parseAddress(remoteHostname(c));
    if (!ip) return UNKNOWN_ADDRESS;
    if (ranges.length > 0 && trusted(ip)) {
      // Each proxy appends the address it got the request from: read from the nearest hop outwards.
      const hops = (c.req.header("x-forwarded-for") ?? "").split(",").map((h) => h.trim()).filter((h) => h !== "");
      for (const hop of hops.reverse()) {
        const next = parseAddress(hop);
        if (!next) break; // Garbage: the last address a trusted proxy vouched for stands.
        ip = next;
        if (!trusted(ip)) break;
      }
    }
    return addressKey(ip);
  };
}

/** The connection's remote address as `Deno.serve` reports it; undefined in-process. */
function remoteHostname(c: Context): string | undefined {
  // Deno.serve's handler info is Hono's `env` (what `getConnInfo` of hono/deno reads, which
  // throws when there is none, as with `app.request()`).
  const info = c.env as { remoteAddr?: { hostname?: unknown } } | undefined;
  const hostname = info?.remoteAddr?.hostname;
  return typeof hostname === "string" ? hostname : undefined;
}

function parseAddress(text: string | undefined): IP | undefined {
  if (!text) return undefined;
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  if (!ipaddr.isValid(bare)) return undefined;
  // process(): an IPv4-mapped IPv6 address (::ffff:192.0.2.1) is the IPv4 client it carries.
  return ipaddr.process(bare);
}

/** The bucket name of an address: IPv4 as is, IPv6 by its /64. */
function addressKey(ip: IP): string {
  if (ip.kind() === "ipv4") return ip.toString();
  const parts = (ip as ipaddr.IPv6).parts.slice(0, 4).map((p) => p.toString(16));
  return `${parts.join(":")}::/64`;
}
