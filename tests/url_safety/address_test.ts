import assert from "node:assert/strict";
import { type AddressVerdict, classifyAddress, isBlockedHostname, isIpLiteral } from "../../src/url_safety/address.ts";

// [address, exact reason]: the reason pins the category, so a range that is
// refused for the wrong reason (e.g. "unparsable") still fails.
const UNSAFE: readonly [string, string][] = [
  ["127.0.0.1", "loopback address 127.0.0.1"],
  ["127.255.255.254", "loopback address 127.255.255.254"],
  ["10.1.2.3", "private address 10.1.2.3"],
  ["172.16.0.1", "private address 172.16.0.1"],
  ["172.31.255.255", "private address 172.31.255.255"],
  ["192.168.0.1", "private address 192.168.0.1"],
  ["169.254.1.1", "link-local address 169.254.1.1"],
  ["100.64.0.1", "carrier-grade NAT address 100.64.0.1"],
  ["100.127.255.255", "carrier-grade NAT address 100.127.255.255"],
  ["224.0.0.1", "multicast address 224.0.0.1"],
  ["239.255.255.250", "multicast address 239.255.255.250"],
  ["255.255.255.255", "broadcast address 255.255.255.255"],
  ["0.0.0.0", "unspecified address 0.0.0.0"],
  ["0.1.2.3", "unspecified address 0.1.2.3"],
  ["198.18.0.1", "benchmarking address 198.18.0.1"],
  ["198.19.255.255", "benchmarking address 198.19.255.255"],
  ["192.0.2.1", "documentation address 192.0.2.1"],
  ["198.51.100.1", "documentation address 198.51.100.1"],
  ["203.0.113.1", "documentation address 203.0.113.1"],
  ["240.0.0.1", "reserved address 240.0.0.1"],
  ["192.0.0.8", "IETF protocol assignment address 192.0.0.8"],
  ["192.88.99.1", "6to4 relay anycast address 192.88.99.1"],
  ["169.254.169.254", "cloud metadata address 169.254.169.254"],
  ["100.100.100.200", "cloud metadata address 100.100.100.200"],
  ["192.0.0.192", "cloud metadata address 192.0.0.192"],
  ["::1", "loopback address ::1"],
  ["[::1]", "loopback address ::1"],
  ["::", "unspecified address ::"],
  ["fe80::1", "link-local address fe80::1"],
  ["febf:ffff::1", "link-local address febf:ffff::1"],
  ["fc00::1", "unique-local address fc00::1"],
  ["fd12:3456::1", "unique-local address fd12:3456::1"],
  ["fd00:ec2::254", "cloud metadata address fd00:ec2::254"],
  ["ff02::1", "multicast address ff02::1"],
  ["2001:db8::1", "documentation address 2001:db8::1"],
  ["2001:2::1", "benchmarking address 2001:2::1"],
  ["2001:4:112::1", "IETF protocol assignment address 2001:4:112::1"],
  ["fec0::1", "site-local address fec0::1"],
  ["100::1", "discard-only address 100::1"],
  ["1::1", "unallocated address 1::1"],
  ["4000::1", "unallocated address 4000::1"],
  [
    "::ffff:127.0.0.1",
    "IPv4-mapped address ::ffff:7f00:1 embeds loopback address 127.0.0.1",
  ],
  [
    "::ffff:a9fe:a9fe",
    "IPv4-mapped address ::ffff:a9fe:a9fe embeds cloud metadata address 169.254.169.254",
  ],
  [
    "::ffff:100.64.0.1",
    "IPv4-mapped address ::ffff:6440:1 embeds carrier-grade NAT address 100.64.0.1",
  ],
  [
    "::127.0.0.1",
    "IPv4-compatible address ::7f00:1 embeds loopback address 127.0.0.1",
  ],
  [
    "::ffff:0:a00:1",
    "IPv4-translated address ::ffff:0:a00:1 embeds private address 10.0.0.1",
  ],
  [
    "64:ff9b::a00:1",
    "NAT64 address 64:ff9b::a00:1 embeds private address 10.0.0.1",
  ],
  [
    "64:ff9b:1::c0a8:101",
    "local-use NAT64 address 64:ff9b:1::c0a8:101 embeds private address 192.168.1.1",
  ],
  [
    "2002:7f00:1::",
    "6to4 address 2002:7f00:1:: embeds loopback address 127.0.0.1",
  ],
  [
    "2002:c000:2ff::1",
    "6to4 address 2002:c000:2ff::1 embeds documentation address 192.0.2.255",
  ],
  [
    "2001:0:4136:e378:8000:63bf:80ff:fffe",
    "Teredo address 2001:0:4136:e378:8000:63bf:80ff:fffe embeds loopback address 127.0.0.1",
  ],
  [
    "2001:0:4136:e378:8000:63bf:f5ff:fffe",
    "Teredo address 2001:0:4136:e378:8000:63bf:f5ff:fffe embeds private address 10.0.0.1",
  ],
  // Transition forms are refused even around a public IPv4 (see address.ts).
  [
    "::ffff:93.184.216.34",
    "IPv4-mapped address ::ffff:5db8:d822 (embeds 93.184.216.34)",
  ],
  [
    "64:ff9b::5db8:d822",
    "NAT64 address 64:ff9b::5db8:d822 (embeds 93.184.216.34)",
  ],
  [
    "2002:5db8:d822::1",
    "6to4 address 2002:5db8:d822::1 (embeds 93.184.216.34)",
  ],
];

const SAFE: readonly string[] = [
  "93.184.216.34",
  "8.8.8.8",
  "1.1.1.1",
  "100.63.255.255", // just below CGNAT
  "100.128.0.0", // just above CGNAT
  "172.15.255.255", // just below 172.16/12
  "172.32.0.0", // just above 172.16/12
  "169.253.255.255",
  "198.17.255.255",
  "198.20.0.0",
  "223.255.255.255", // just below multicast
  "2606:2800:220:1:248:1893:25c8:1946",
  "[2606:4700:4700::1111]",
  "2a00:1450:4001:82b::200e",
  "2001:4860:4860::8888",
];

const UNPARSABLE: readonly string[] = [
  "",
  "localhost",
  "example.com",
  "127.1", // inet_aton short form: never a resolver answer
  "0x7f.0.0.1",
  "2130706433",
  "0177.0.0.1",
  "010.0.0.1",
  "256.0.0.1",
  "1.2.3.4.5",
  " 8.8.8.8",
  "fe80::1%eth0", // zone identifiers are refused
  "[8.8.8.8]",
  "::ffff:0x7f.1",
  "gggg::1",
];

Deno.test("classifyAddress refuses each unsafe category with its reason", async (t) => {
  for (const [address, reason] of UNSAFE) {
    await t.step(address, () => {
      assert.deepEqual(classifyAddress(address), { safe: false, reason });
    });
  }
});

Deno.test("classifyAddress accepts globally routable unicast", async (t) => {
  for (const address of SAFE) {
    await t.step(address, () => {
      assert.deepEqual(classifyAddress(address), { safe: true });
    });
  }
});

Deno.test("classifyAddress refuses what it cannot parse strictly", async (t) => {
  for (const address of UNPARSABLE) {
    await t.step(JSON.stringify(address), () => {
      const verdict = classifyAddress(address);
      assert.equal(verdict.safe, false);
      assert.match(verdict.safe ? "" : verdict.reason, /^unparsable address /);
    });
  }
});

/** An IPv4 address hidden in an IPv6 one: the form hiding it, the IPv4, and the IPv6 as classifyAddress prints it. */
type Embedding = { form: string; ipv4: string; text: string };

// [address, what it embeds, or the verdict of an address that embeds nothing].
const EMBEDDED: readonly [string, Embedding | AddressVerdict][] = [
  ["::ffff:7f00:1", { form: "IPv4-mapped", ipv4: "127.0.0.1", text: "::ffff:7f00:1" }],
  ["[::ffff:1.2.3.4]", { form: "IPv4-mapped", ipv4: "1.2.3.4", text: "::ffff:102:304" }],
  ["::ffff:0:102:304", { form: "IPv4-translated", ipv4: "1.2.3.4", text: "::ffff:0:102:304" }],
  ["::102:304", { form: "IPv4-compatible", ipv4: "1.2.3.4", text: "::102:304" }],
  ["64:ff9b::a00:1", { form: "NAT64", ipv4: "10.0.0.1", text: "64:ff9b::a00:1" }],
  ["64:ff9b:1::a9fe:a9fe", {
    form: "local-use NAT64",
    ipv4: "169.254.169.254",
    text: "64:ff9b:1::a9fe:a9fe",
  }],
  ["2002:7f00:1::", { form: "6to4", ipv4: "127.0.0.1", text: "2002:7f00:1::" }],
  // Only bits 16..48 count for 6to4, whatever follows.
  ["2002:102:304:ffff::abcd", { form: "6to4", ipv4: "1.2.3.4", text: "2002:102:304:ffff::abcd" }],
  ["2001:0:4136:e378:8000:63bf:80ff:fffe", {
    form: "Teredo",
    ipv4: "127.0.0.1",
    text: "2001:0:4136:e378:8000:63bf:80ff:fffe",
  }],
  ["2001:0:4136:e378:8000:63bf:a247:27dd", {
    form: "Teredo",
    ipv4: "93.184.216.34",
    text: "2001:0:4136:e378:8000:63bf:a247:27dd",
  }],
  ["2001:0:0:0:0:0:ffff:ffff", { form: "Teredo", ipv4: "0.0.0.0", text: "2001::ffff:ffff" }],
  // No embedded IPv4: the verdict is the address's own.
  ["2606:2800:220:1:248:1893:25c8:1946", { safe: true }],
  ["2001:db8::7f00:1", { safe: false, reason: "documentation address 2001:db8::7f00:1" }],
  ["64:ff9c::a00:1", { safe: false, reason: "unallocated address 64:ff9c::a00:1" }],
  ["127.0.0.1", { safe: false, reason: "loopback address 127.0.0.1" }],
  ["not an address", { safe: false, reason: 'unparsable address "not an address"' }],
];

/**
 * The verdict on an address embedding `e`: refused either way, for the
 * embedded IPv4's own reason when that one is unsafe, else as a transition form.
 */
function verdictOfEmbedding(e: Embedding): AddressVerdict {
  const inner = classifyAddress(e.ipv4);
  return {
    safe: false,
    reason: inner.safe
      ? `${e.form} address ${e.text} (embeds ${e.ipv4})`
      : `${e.form} address ${e.text} embeds ${inner.reason}`,
  };
}

Deno.test("classifyAddress finds the IPv4 inside transition forms and judges by it", async (t) => {
  for (const [address, expected] of EMBEDDED) {
    await t.step(address, () => {
      const verdict = classifyAddress(address);
      if ("form" in expected) {
        assert.deepEqual(verdict, verdictOfEmbedding(expected));
      } else {
        assert.deepEqual(verdict, expected);
        assert.doesNotMatch(verdict.safe ? "" : verdict.reason, /embeds/, "nothing embedded");
      }
    });
  }
});

const HOSTNAMES: readonly [string, boolean][] = [
  ["localhost", true],
  ["LOCALHOST", true],
  ["localhost.", true],
  ["localhost..", true],
  ["foo.localhost", true],
  ["a.b.localhost.", true],
  ["printer.local", true],
  ["metadata.google.internal", true],
  ["box.localdomain", true],
  ["nas.home.arpa", true],
  ["home.arpa", true],
  ["intranet", true], // single label: search domains or /etc/hosts
  ["", true],
  ["example.com", false],
  ["example.com.", false],
  ["localhost.example.com", false],
  ["notlocalhost.com", false],
  ["mylocal", true], // single label, not because of the suffix
  ["my-local.com", false],
  ["internal.example.org", false],
  ["arpa.example", false],
];

Deno.test("isBlockedHostname", async (t) => {
  for (const [hostname, blocked] of HOSTNAMES) {
    await t.step(`${JSON.stringify(hostname)} -> ${blocked}`, () => {
      assert.equal(isBlockedHostname(hostname), blocked);
    });
  }
});

Deno.test("isIpLiteral tells URL hosts that are addresses from names", () => {
  assert.equal(isIpLiteral("127.0.0.1"), true);
  assert.equal(isIpLiteral("[::1]"), true);
  assert.equal(isIpLiteral("::1"), true);
  assert.equal(isIpLiteral("example.com"), false);
  assert.equal(isIpLiteral("1.2.3.example"), false);
  assert.equal(isIpLiteral("localhost"), false);
});
