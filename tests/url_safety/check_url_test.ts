import assert from "node:assert/strict";
import {
  checkWebhookUrl,
  resolveSafeAddresses,
  type UrlCheck,
  type UrlCheckOptions,
} from "../../src/url_safety/check_url.ts";
import { guardResolver, type Resolver, systemResolver } from "../../src/url_safety/resolver.ts";
import { staticResolver } from "../_helpers/resolver.ts";

const resolver = staticResolver({
  "example.com": ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"],
  "internal.example.com": ["10.0.0.5"],
  "mixed.example.com": ["93.184.216.34", "127.0.0.1"],
  "mixed6.example.com": ["2606:4700:4700::1111", "fd00::5"],
  "nat64.example.com": ["64:ff9b::a9fe:a9fe"],
  "metadata.example.com": ["169.254.169.254"],
  "garbage.example.com": ["not-an-ip"],
  "localhost": ["127.0.0.1", "::1"],
  "evil.localhost": ["127.0.0.1"],
});

const opts: UrlCheckOptions = { resolver, trustedHosts: new Set() };

function kindOf(check: UrlCheck): string {
  return check.ok ? "ok" : check.kind;
}

/**
 * checkWebhookUrl with no trusted hosts and a resolver that records every
 * lookup and answers nothing: what syntax and the host alone decide. The
 * checks swallow a resolver's errors, so "without DNS" is the record staying
 * empty, which `withoutDns` asserts.
 */
async function checkOffline(input: string): Promise<{ check: UrlCheck; lookups: string[] }> {
  const lookups: string[] = [];
  const recording: Resolver = (hostname) => {
    lookups.push(hostname);
    return Promise.resolve([]);
  };
  return { check: await checkWebhookUrl(input, { resolver: recording, trustedHosts: new Set() }), lookups };
}

/** checkOffline that must decide without a single DNS lookup. */
async function withoutDns(input: string): Promise<UrlCheck> {
  const { check, lookups } = await checkOffline(input);
  assert.deepEqual(lookups, [], `${input} was decided through DNS`);
  return check;
}

// Every form here must come back as kind "unsafe" from both entry points.
const UNSAFE_URLS: readonly string[] = [
  // Numeric disguises of 127.0.0.1, normalised by the WHATWG parser.
  "https://2130706433/",
  "https://0x7f.1/",
  "https://0x7f000001/",
  "https://0177.0.0.1/",
  "https://127.000.000.001/",
  "https://127.1/",
  "https://127。0。0。1/",
  "https://%31%32%37.0.0.1/",
  "https://127.0.0.1./",
  "https://127.0.0.1:8443/hook",
  // IPv6 forms embedding unsafe IPv4.
  "https://[::ffff:127.0.0.1]/",
  "https://[::ffff:7f00:1]/",
  "https://[0:0:0:0:0:ffff:127.0.0.1]/",
  "https://[::127.0.0.1]/",
  "https://[::ffff:0:7f00:1]/",
  "https://[64:ff9b::a00:1]/",
  "https://[64:ff9b:1::a9fe:a9fe]/",
  "https://[2002:7f00:1::]/",
  "https://[2002:a9fe:a9fe::1]/",
  "https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/",
  "https://[::ffff:a9fe:a9fe]/",
  "https://[::ffff:100.64.0.1]/",
  // Plain unsafe addresses.
  "https://169.254.169.254/latest/meta-data/",
  "https://100.100.100.200/",
  "https://192.0.0.192/",
  "https://[fd00:ec2::254]/",
  "https://100.64.0.1/",
  "https://[::1]/",
  "https://[::]/",
  "https://0.0.0.0/",
  "https://0/",
  "https://[fe80::1]/",
  "https://[fd00::1]/",
  "https://224.0.0.1/",
  "https://[ff02::1]/",
  "https://255.255.255.255/",
  "https://10.0.0.1/",
  "https://172.16.0.1/",
  "https://172.31.255.255/",
  "https://192.168.1.1/",
  "https://198.18.0.1/",
  "https://[2001:2::1]/",
  "https://192.0.2.1/",
  "https://198.51.100.7/",
  "https://203.0.113.9/",
  "https://[2001:db8::1]/",
  "https://240.0.0.1/",
  "https://192.0.0.8/",
  "https://192.88.99.1/",
  // Names refused without DNS.
  "https://localhost/",
  "https://LOCALHOST:8443/",
  "https://localhost./",
  "https://ⓛocalhost/",
  "https://foo.localhost/",
  "https://foo.localhost./",
  "https://printer.local/",
  "https://metadata.google.internal/computeMetadata/v1/",
  "https://router.localdomain/",
  "https://nas.home.arpa/",
  "https://intranet/",
];

Deno.test("checkWebhookUrl refuses unsafe targets without DNS", async (t) => {
  for (const input of UNSAFE_URLS) {
    await t.step(input, async () => {
      assert.equal(kindOf(await withoutDns(input)), "unsafe");
    });
  }
});

Deno.test("checkWebhookUrl refuses the same unsafe targets", async (t) => {
  for (const input of UNSAFE_URLS) {
    await t.step(input, async () => {
      assert.equal(kindOf(await checkWebhookUrl(input, opts)), "unsafe");
    });
  }
});

Deno.test("unsafe reasons name the category and the normalised address", async () => {
  const cases: [string, string][] = [
    ["https://2130706433/", "Unsafe host: loopback address 127.0.0.1"],
    [
      "https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/",
      "Unsafe host: Teredo address 2001:0:4136:e378:8000:63bf:80ff:fffe embeds loopback address 127.0.0.1",
    ],
    [
      "https://169.254.169.254/",
      "Unsafe host: cloud metadata address 169.254.169.254",
    ],
    [
      "https://localhost./",
      "Host name localhost. is not publicly resolvable",
    ],
  ];
  for (const [input, reason] of cases) {
    assert.deepEqual(await withoutDns(input), {
      ok: false,
      kind: "unsafe",
      reason,
    });
  }
});

const INVALID_URLS: readonly string[] = [
  "http://example.com/",
  "HTTP://example.com/",
  "ftp://x/",
  "file:///etc/passwd",
  "javascript:alert(1)",
  "wss://example.com/",
  "https://user:pw@example.com/",
  "https://user@example.com/",
  "https://:pw@example.com/",
  "https://user@127.0.0.1/",
  "not a url",
  "",
  "https:///",
  "https://",
  "https://[::1/",
  "https://08.0.0.1/",
  "https://1.2.3.4.5/",
  "https://[fe80::1%25eth0]/",
];

Deno.test("malformed, non-https and userinfo URLs are invalid", async (t) => {
  for (const input of INVALID_URLS) {
    await t.step(JSON.stringify(input), async () => {
      assert.equal(kindOf(await withoutDns(input)), "invalid");
      assert.equal(kindOf(await checkWebhookUrl(input, opts)), "invalid");
    });
  }
});

const SAFE_URLS: readonly [string, string][] = [
  ["https://example.com/hook", "https://example.com/hook"],
  ["https://EXAMPLE.com:8443/a?b=1#c", "https://example.com:8443/a?b=1#c"],
  ["https://example.com:443/", "https://example.com/"],
  ["https://93.184.216.34/", "https://93.184.216.34/"],
  [
    "https://[2606:2800:220:1:248:1893:25c8:1946]/",
    "https://[2606:2800:220:1:248:1893:25c8:1946]/",
  ],
  ["https://1572395042/", "https://93.184.216.34/"],
  ["https://unknown.example.net/", "https://unknown.example.net/"],
];

Deno.test("safe URLs are accepted and normalised", async (t) => {
  for (const [input, normalized] of SAFE_URLS) {
    await t.step(input, async () => {
      // Without an answer from DNS (syntax and host alone) and with the resolver's answers.
      for (
        const check of [
          (await checkOffline(input)).check,
          await checkWebhookUrl(input, opts),
        ]
      ) {
        assert.equal(check.ok, true);
        if (!check.ok) return;
        assert.equal(check.normalized, normalized);
        assert.equal(check.url.href, normalized);
      }
    });
  }
});

Deno.test("names are refused when any resolved address is unsafe", async (t) => {
  const cases: [string, string][] = [
    [
      "https://internal.example.com/",
      "Host internal.example.com resolves to an unsafe address: private address 10.0.0.5",
    ],
    [
      "https://mixed.example.com/",
      "Host mixed.example.com resolves to an unsafe address: loopback address 127.0.0.1",
    ],
    [
      "https://mixed6.example.com/",
      "Host mixed6.example.com resolves to an unsafe address: unique-local address fd00::5",
    ],
    [
      "https://nat64.example.com/",
      "Host nat64.example.com resolves to an unsafe address: NAT64 address 64:ff9b::a9fe:a9fe embeds cloud metadata address 169.254.169.254",
    ],
    [
      "https://garbage.example.com/",
      'Host garbage.example.com resolves to an unsafe address: unparsable address "not-an-ip"',
    ],
  ];
  for (const [input, reason] of cases) {
    await t.step(input, async () => {
      // Syntax alone cannot know: without an answer from DNS the name passes.
      assert.equal((await checkOffline(input)).check.ok, true);
      assert.deepEqual(await checkWebhookUrl(input, opts), {
        ok: false,
        kind: "unsafe",
        reason,
      });
      const host = new URL(input).hostname;
      assert.deepEqual(await resolveSafeAddresses(host, opts), {
        ok: false,
        kind: "unsafe",
        reason,
      });
    });
  }
});

Deno.test("the resolver sees the parsed host name", async () => {
  const seen: string[] = [];
  const spy: Resolver = (hostname) => {
    seen.push(hostname);
    return Promise.resolve(["10.0.0.1"]);
  };
  const check = await checkWebhookUrl("https://Ex%41mple.COM./x", {
    resolver: spy,
    trustedHosts: new Set(),
  });
  assert.equal(kindOf(check), "unsafe");
  assert.deepEqual(seen, ["example.com."]);
});

Deno.test("IP literals are not sent to the resolver", async () => {
  const seen: string[] = [];
  const spy: Resolver = (hostname) => {
    seen.push(hostname);
    return Promise.resolve(["10.0.0.1"]);
  };
  const options = { resolver: spy, trustedHosts: new Set<string>() };
  assert.equal(
    (await checkWebhookUrl("https://93.184.216.34/", options)).ok,
    true,
  );
  assert.deepEqual(
    await resolveSafeAddresses("[2606:4700:4700::1111]", options),
    {
      ok: true,
      addresses: ["2606:4700:4700::1111"],
    },
  );
  assert.deepEqual(seen, []);
});

Deno.test("a name that does not resolve is accepted now, refused at delivery", async () => {
  const check = await checkWebhookUrl("https://nx.example.org/hook", opts);
  assert.equal(check.ok, true);
  assert.deepEqual(await resolveSafeAddresses("nx.example.org", opts), {
    ok: false,
    kind: "dns",
    reason: "Could not resolve host: nx.example.org",
  });
});

Deno.test("a failing resolver does not throw out of the checks", async () => {
  const throwing: Resolver = () => {
    throw new Error("boom");
  };
  const rejecting: Resolver = () => Promise.reject(new Error("servfail"));
  for (const bad of [throwing, rejecting]) {
    const options = { resolver: bad, trustedHosts: new Set<string>() };
    assert.equal(
      (await checkWebhookUrl("https://example.com/", options)).ok,
      true,
    );
    assert.deepEqual(await resolveSafeAddresses("example.com", options), {
      ok: false,
      kind: "dns",
      reason: "Could not resolve host: example.com",
    });
  }
});

Deno.test("a hanging resolver times out after the default 2 s", async () => {
  const hanging: Resolver = () => new Promise<string[]>(() => {});
  const started = Date.now();
  const check = await checkWebhookUrl("https://example.com/", {
    resolver: hanging,
    trustedHosts: new Set(),
  });
  const elapsed = Date.now() - started;
  assert.equal(check.ok, true);
  assert.ok(elapsed >= 1900 && elapsed < 4000, `took ${elapsed} ms`);
});

Deno.test("guardResolver honours a custom timeout and passes answers through", async () => {
  const hanging: Resolver = () => new Promise<string[]>(() => {});
  const started = Date.now();
  assert.deepEqual(await guardResolver(hanging, 50)("example.com"), []);
  assert.ok(Date.now() - started < 1000);
  assert.deepEqual(await guardResolver(resolver, 50)("example.com"), [
    "93.184.216.34",
    "2606:2800:220:1:248:1893:25c8:1946",
  ]);
});

Deno.test("resolveSafeAddresses returns every address when all are safe", async () => {
  assert.deepEqual(await resolveSafeAddresses("example.com", opts), {
    ok: true,
    addresses: ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"],
  });
  assert.deepEqual(await resolveSafeAddresses("93.184.216.34", opts), {
    ok: true,
    addresses: ["93.184.216.34"],
  });
  assert.deepEqual(await resolveSafeAddresses("127.0.0.1", opts), {
    ok: false,
    kind: "unsafe",
    reason: "Unsafe host: loopback address 127.0.0.1",
  });
  assert.deepEqual(await resolveSafeAddresses("localhost", opts), {
    ok: false,
    kind: "unsafe",
    reason: "Host name localhost is not publicly resolvable",
  });
});

Deno.test("trusted hosts skip the address checks, exactly", async (t) => {
  const trusted: UrlCheckOptions = {
    resolver,
    trustedHosts: new Set(["localhost", "127.0.0.1", "[::1]"]),
  };
  await t.step(
    "localhost is accepted and resolved through the resolver",
    async () => {
      assert.equal(
        (await checkWebhookUrl("https://localhost:8443/hook", trusted)).ok,
        true,
      );
      assert.deepEqual(await resolveSafeAddresses("localhost", trusted), {
        ok: true,
        addresses: ["127.0.0.1", "::1"],
      });
    },
  );
  await t.step("trusted IP literals are returned as-is", async () => {
    assert.equal(
      (await checkWebhookUrl("https://127.0.0.1/", trusted)).ok,
      true,
    );
    assert.equal((await checkWebhookUrl("https://[::1]/", trusted)).ok, true);
    assert.deepEqual(await resolveSafeAddresses("127.0.0.1", trusted), {
      ok: true,
      addresses: ["127.0.0.1"],
    });
    assert.deepEqual(await resolveSafeAddresses("[::1]", trusted), {
      ok: true,
      addresses: ["::1"],
    });
  });
  await t.step(
    "a disguised trusted address matches after normalisation",
    async () => {
      assert.equal(
        (await checkWebhookUrl("https://2130706433/", trusted)).ok,
        true,
      );
    },
  );
  await t.step("no wildcard: evil.localhost stays refused", async () => {
    assert.equal(
      kindOf(await checkWebhookUrl("https://evil.localhost/", trusted)),
      "unsafe",
    );
    assert.deepEqual(await resolveSafeAddresses("evil.localhost", trusted), {
      ok: false,
      kind: "unsafe",
      reason: "Host name evil.localhost is not publicly resolvable",
    });
  });
  await t.step("other loopback spellings are not trusted", async () => {
    assert.equal(
      kindOf(await checkWebhookUrl("https://localhost./", trusted)),
      "unsafe",
    );
    assert.equal(
      kindOf(await checkWebhookUrl("https://127.0.0.2/", trusted)),
      "unsafe",
    );
  });
  await t.step("still https only and no userinfo", async () => {
    assert.equal(
      kindOf(await checkWebhookUrl("http://localhost/", trusted)),
      "invalid",
    );
    assert.equal(
      kindOf(await checkWebhookUrl("https://u:p@localhost/", trusted)),
      "invalid",
    );
  });
  await t.step("without the trusted set, localhost is refused without DNS", async () => {
    assert.equal(kindOf(await withoutDns("https://localhost/")), "unsafe");
  });
});

Deno.test("staticResolver answers from its table, case-insensitively", async () => {
  assert.deepEqual(await resolver("EXAMPLE.com"), [
    "93.184.216.34",
    "2606:2800:220:1:248:1893:25c8:1946",
  ]);
  assert.deepEqual(await resolver("nowhere.example"), []);
});

Deno.test("systemResolver never throws and respects its timeout", async () => {
  // .invalid never resolves (RFC 6761); without network the lookup fails or
  // hangs, and either way the answer must be [] within the timeout.
  const started = Date.now();
  assert.deepEqual(await systemResolver(500)("webhook-check.invalid"), []);
  assert.ok(Date.now() - started < 2000);
});
