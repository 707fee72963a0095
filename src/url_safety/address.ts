/**
 * Classification of IP addresses and host names as webhook targets.
 *
 * Only globally routable unicast is safe: an address must be "unicast" for
 * ipaddr.js and outside every extra range listed here. The extra lists exist
 * for what ipaddr.js lumps together (to give a precise reason) or misses
 * (IPv4-compatible IPv6, unallocated IPv6 space, cloud metadata endpoints).
 */
import ipaddr from "ipaddr.js";

export type AddressVerdict = { safe: true } | { safe: false; reason: string };

type IP = ipaddr.IPv4 | ipaddr.IPv6;
type Cidr = [IP, number];

function cidrs(list: readonly string[]): Cidr[] {
  return list.map((c) => ipaddr.parseCIDR(c));
}

function inAny(ip: IP, list: readonly Cidr[]): boolean {
  // match() throws when the families differ, so filter on kind first.
  return list.some(([net, bits]) => net.kind() === ip.kind() && ip.match(net, bits));
}

// Checked before range() so the reason names the endpoint rather than a
// generic "link-local" or "unique-local".
const METADATA = cidrs([
  "169.254.169.254/32",
  "fd00:ec2::254/128",
  "100.100.100.200/32",
  "192.0.0.192/32",
]);

// ipaddr.js reports all of these as "reserved"; split them for the reason.
// First match wins: 2001:db8::/32 and 2001:2::/48 sit inside 2001::/23.
const LABELLED: readonly [string, Cidr[]][] = [
  [
    "documentation",
    cidrs([
      "192.0.2.0/24",
      "198.51.100.0/24",
      "203.0.113.0/24",
      "2001:db8::/32",
      "3fff::/20",
    ]),
  ],
  ["benchmarking", cidrs(["198.18.0.0/15", "2001:2::/48"])],
  ["6to4 relay anycast", cidrs(["192.88.99.0/24"])],
  ["IETF protocol assignment", cidrs(["192.0.0.0/24", "2001::/23"])],
];

// [form, prefix, index of the first IPv4 byte, inverted]. The IPv4 sits in
// the low 32 bits, except for 6to4 (bits 16..48) and Teredo (client address
// inverted so that NATs leave it alone).
const EMBEDDING: readonly [string, Cidr, number, boolean][] = [
  ["IPv4-mapped", ipaddr.parseCIDR("::ffff:0:0/96"), 12, false],
  ["IPv4-translated", ipaddr.parseCIDR("::ffff:0:0:0/96"), 12, false],
  ["IPv4-compatible", ipaddr.parseCIDR("::/96"), 12, false],
  ["NAT64", ipaddr.parseCIDR("64:ff9b::/96"), 12, false],
  // Assumes the common /96 layout inside the local-use /48; the prefix is
  // refused whatever it embeds, so a wrong guess only affects the reason.
  ["local-use NAT64", ipaddr.parseCIDR("64:ff9b:1::/48"), 12, false],
  ["6to4", ipaddr.parseCIDR("2002::/16"), 2, false],
  ["Teredo", ipaddr.parseCIDR("2001::/32"), 12, true],
];

// IANA has allocated only 2000::/3 for global unicast; ipaddr.js calls the
// rest of the space "unicast" too.
const GLOBAL_UNICAST_V6 = cidrs(["2000::/3"]);

const RANGE_LABELS: Record<string, string> = {
  unspecified: "unspecified",
  broadcast: "broadcast",
  multicast: "multicast",
  linkLocal: "link-local",
  loopback: "loopback",
  carrierGradeNat: "carrier-grade NAT",
  private: "private",
  reserved: "reserved",
  uniqueLocal: "unique-local",
  deprecatedSiteLocal: "site-local",
  benchmarking: "benchmarking",
  amt: "AMT anycast",
  as112: "AS112",
  as112v6: "AS112",
  discard: "discard-only",
  ipv4Mapped: "IPv4-mapped",
  rfc6145: "IPv4-translated",
  rfc6052: "NAT64",
  "6to4": "6to4",
  teredo: "Teredo",
};

// Strict forms only: ipaddr.parse() also takes inet_aton spellings such as
// "0x7f.1" or "010.0.0.1", which resolvers never return and a URL host never
// is after WHATWG parsing, so anything else is treated as unparsable.
function parseStrict(address: string): IP | undefined {
  if (address.startsWith("[") && address.endsWith("]")) {
    return parseIPv6(address.slice(1, -1));
  }
  if (ipaddr.IPv4.isValidFourPartDecimal(address)) {
    return ipaddr.IPv4.parse(address);
  }
  return parseIPv6(address);
}

// IPv6 goes through the WHATWG host parser first: ipaddr.js reads
// "::1.2.3.4" as IPv4-mapped, while sockets (and URLs) treat it as
// IPv4-compatible. Zone identifiers are refused there too, which is wanted:
// they make the target depend on the local interfaces.
function parseIPv6(bare: string): ipaddr.IPv6 | undefined {
  // The character check also keeps "]", "/" and "@" out of the URL below.
  if (!/^[0-9a-f:.]+$/i.test(bare) || !bare.includes(":")) return undefined;
  let host: string;
  try {
    host = new URL(`https://[${bare}]/`).hostname.slice(1, -1);
  } catch {
    return undefined;
  }
  return ipaddr.IPv6.isValid(host) ? ipaddr.IPv6.parse(host) : undefined;
}

function embedded(
  ip: ipaddr.IPv6,
): { form: string; ipv4: ipaddr.IPv4 } | undefined {
  const hit = EMBEDDING.find(([, net]) => inAny(ip, [net]));
  if (hit === undefined) return undefined;
  const [form, , first, invert] = hit;
  const bytes = ip.toByteArray().slice(first, first + 4);
  return {
    form,
    ipv4: new ipaddr.IPv4(invert ? bytes.map((b) => b ^ 0xff) : bytes),
  };
}

function unsafe(reason: string): AddressVerdict {
  return { safe: false, reason };
}

function labelOf(ip: IP): string | undefined {
  if (inAny(ip, METADATA)) return "cloud metadata";
  const labelled = LABELLED.find(([, nets]) => inAny(ip, nets));
  if (labelled !== undefined) return labelled[0];
  const range: string = ip.range();
  if (range === "unicast") return undefined;
  return RANGE_LABELS[range] ?? range;
}

function classifyIPv4(ip: ipaddr.IPv4): AddressVerdict {
  const label = labelOf(ip);
  return label === undefined ? { safe: true } : unsafe(`${label} address ${ip.toString()}`);
}

function classifyIPv6(ip: ipaddr.IPv6): AddressVerdict {
  const text = ip.toString();
  const range: string = ip.range();
  // "::" and "::1" also sit in the IPv4-compatible /96; name them properly.
  if (range === "unspecified" || range === "loopback") {
    return unsafe(`${range} address ${text}`);
  }
  if (inAny(ip, METADATA)) return unsafe(`cloud metadata address ${text}`);
  const inner = embedded(ip);
  if (inner !== undefined) {
    const verdict = classifyIPv4(inner.ipv4);
    if (!verdict.safe) {
      return unsafe(`${inner.form} address ${text} embeds ${verdict.reason}`);
    }
    // Even with a public IPv4 inside, these are not globally routable
    // unicast; refusing them costs nothing for real webhook receivers.
    return unsafe(
      `${inner.form} address ${text} (embeds ${inner.ipv4.toString()})`,
    );
  }
  const label = labelOf(ip);
  if (label !== undefined) return unsafe(`${label} address ${text}`);
  if (!inAny(ip, GLOBAL_UNICAST_V6)) {
    return unsafe(`unallocated address ${text}`);
  }
  return { safe: true };
}

/** Decides whether an IP address (v4 or v6, brackets allowed) is a safe webhook target. */
export function classifyAddress(address: string): AddressVerdict {
  const ip = parseStrict(address);
  if (ip === undefined) {
    return unsafe(`unparsable address ${JSON.stringify(address)}`);
  }
  return ip.kind() === "ipv4" ? classifyIPv4(ip as ipaddr.IPv4) : classifyIPv6(ip as ipaddr.IPv6);
}

/** Whether a host is an IP literal (dotted quad, or IPv6 with or without brackets) rather than a name. */
export function isIpLiteral(hostname: string): boolean {
  // Names never contain ":" or "[", and WHATWG parsing turns every numeric
  // IPv4 spelling into a dotted quad, so this cannot misfile a URL host.
  return hostname.startsWith("[") || hostname.includes(":") ||
    ipaddr.IPv4.isValidFourPartDecimal(hostname);
}

// Private-use names, never in public DNS, so no public CA can issue a
// certificate for them and no legitimate https webhook can live there.
const BLOCKED_SUFFIXES = [
  "localhost",
  "local",
  "internal",
  "localdomain",
  "home.arpa",
];

/** Whether a host name is refused by name alone (localhost, private-use suffixes, single labels). */
export function isBlockedHostname(hostname: string): boolean {
  // A trailing dot is the same name in absolute form; strip every one so
  // "localhost." and "localhost.." cannot slip past the suffix test.
  const name = hostname.toLowerCase().replace(/\.+$/, "");
  if (name === "") return true;
  // Single-label names only resolve through search domains or /etc/hosts,
  // i.e. to something on the local network.
  if (!name.includes(".")) return true;
  return BLOCKED_SUFFIXES.some((s) => name === s || name.endsWith(`.${s}`));
}

/**
 * Whether a URL host names this machine: `localhost`, a `*.localhost` name
 * (a trailing dot allowed), or a loopback literal (127.0.0.0/8, `::1`).
 */
export function isLoopbackHost(hostname: string): boolean {
  if (isIpLiteral(hostname)) return parseStrict(hostname)?.range() === "loopback";
  const name = hostname.toLowerCase().replace(/\.+$/, "");
  return name === "localhost" || name.endsWith(".localhost");
}
