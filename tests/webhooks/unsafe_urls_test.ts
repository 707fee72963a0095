/**
 * Webhook URL safety over HTTP (spec 7 INVALID_WEBHOOK_URL, design "Webhook
 * URL safety"): every unsafe target is refused on POST and on PATCH, through
 * IP literals in any spelling, blocked names, and DNS answers.
 */
import assert from "node:assert/strict";
import { newUser } from "../_helpers/app.ts";
import { withService } from "../_helpers/harness.ts";
import { body, countWebhooks, createOk, createRaw, expectError, getOne, patch, snapshot } from "./_support.ts";

// Each entry is [url, what it really is]. All must be refused with INVALID_WEBHOOK_URL.
const UNSAFE: ReadonlyArray<readonly [string, string]> = [
  // Numeric disguises of loopback.
  ["https://2130706433/", "decimal 127.0.0.1"],
  ["https://0x7f.1/", "hex short form"],
  ["https://0x7f000001/", "hex whole number"],
  ["https://017700000001/", "octal whole number"],
  ["https://0177.0.0.1/", "octal first part"],
  ["https://127.1/", "short form"],
  ["https://127.0.1/", "three-part short form"],
  ["https://127.000.000.001/", "zero padded"],
  ["https://127。0。0。1/", "ideographic full stops"],
  ["https://127．0．0．1/", "full-width full stops"],
  ["https://%31%32%37.0.0.1/", "percent-encoded"],
  ["https://127.0.0.1./", "trailing dot"],
  ["https://127.0.0.1:8443/hook", "loopback with port"],
  ["https://127.255.255.254/", "loopback /8"],
  ["https://[::1]/", "IPv6 loopback"],
  ["https://[0:0:0:0:0:0:0:1]/", "IPv6 loopback, long form"],
  // IPv6 forms embedding private IPv4.
  ["https://[::ffff:127.0.0.1]/", "IPv4-mapped loopback"],
  ["https://[::ffff:7f00:1]/", "IPv4-mapped loopback, hex"],
  ["https://[::ffff:10.0.0.1]/", "IPv4-mapped private"],
  ["https://[::127.0.0.1]/", "IPv4-compatible loopback"],
  ["https://[64:ff9b::a00:1]/", "NAT64 of 10.0.0.1"],
  ["https://[64:ff9b::a9fe:a9fe]/", "NAT64 of metadata"],
  ["https://[2002:7f00:1::]/", "6to4 of loopback"],
  ["https://[::ffff:a9fe:a9fe]/", "IPv4-mapped metadata"],
  // Private, link-local, CGNAT, metadata and other non-public ranges.
  ["https://10.0.0.1/", "private 10/8"],
  ["https://10.255.255.255/hook", "private 10/8, top"],
  ["https://172.16.0.1/", "private 172.16/12"],
  ["https://172.31.255.1/", "private 172.16/12, top"],
  ["https://192.168.0.1/", "private 192.168/16"],
  ["https://169.254.169.254/", "cloud metadata"],
  ["https://169.254.169.254/latest/meta-data/", "cloud metadata path"],
  ["https://169.254.1.1/", "link-local"],
  ["https://100.64.0.1/", "CGNAT"],
  ["https://100.127.255.254/", "CGNAT, top"],
  ["https://100.100.100.200/", "Alibaba metadata"],
  ["https://[fd00:ec2::254]/", "AWS IPv6 metadata"],
  ["https://0.0.0.0/", "unspecified"],
  ["https://0/", "unspecified, one part"],
  ["https://[::]/", "IPv6 unspecified"],
  ["https://255.255.255.255/", "broadcast"],
  ["https://224.0.0.1/", "multicast"],
  ["https://[ff02::1]/", "IPv6 multicast"],
  ["https://[fe80::1]/", "IPv6 link-local"],
  ["https://[fd00::1]/", "unique-local"],
  ["https://[fc00::1]/", "unique-local fc00"],
  ["https://[fec0::1]/", "site-local"],
  ["https://192.0.2.1/", "documentation"],
  ["https://198.18.0.1/", "benchmarking"],
  ["https://240.0.0.1/", "reserved"],
  // Names that can only be local.
  ["https://localhost/", "localhost"],
  ["https://LOCALHOST/", "localhost, upper case"],
  ["https://localhost./", "localhost, absolute"],
  ["https://localhost:8443/hook", "localhost with port"],
  ["https://foo.localhost/", "*.localhost"],
  ["https://a.b.localhost./", "*.localhost, absolute"],
  ["https://printer.local/", "mDNS .local"],
  ["https://db.internal/", ".internal"],
  ["https://router.home.arpa/", "home.arpa"],
  ["https://intranet/", "single label"],
];

Deno.test(`${UNSAFE.length} unsafe URL forms are refused on POST with 400 INVALID_WEBHOOK_URL`, async () => {
  assert.ok(UNSAFE.length >= 30);
  await withService({}, async ({ app }) => {
    const user = await newUser(app, "pro");
    const accepted: string[] = [];
    for (const [url, what] of UNSAFE) {
      const res = await createRaw(app, user, { url, events: ["message.received"] });
      const json = await body(res);
      if (res.status === 201 || json.code !== "INVALID_WEBHOOK_URL") {
        accepted.push(`${url} (${what}): ${res.status} ${JSON.stringify(json)}`);
        continue;
      }
      assert.equal(res.status, 400, url);
      assert.equal(json.success, false);
      assert.ok((json.details as { path: string }[]).some((d) => d.path === "url"), JSON.stringify(json));
    }
    assert.deepEqual(accepted, [], "every unsafe form refused with INVALID_WEBHOOK_URL");
    assert.equal(await countWebhooks(app.deps.sql), 0);
  });
});

Deno.test("PATCH to an unsafe URL is refused with INVALID_WEBHOOK_URL and the url stays", async () => {
  await withService({}, async ({ app }) => {
    const user = await newUser(app, "pro");
    const hook = await createOk(app, user, "https://hooks.example.com/safe");
    const before = await snapshot(app.deps.sql);
    const wrong: string[] = [];
    for (const [url, what] of UNSAFE) {
      const res = await patch(app, user, hook.id, { url });
      const json = await body(res);
      if (res.status !== 400 || json.code !== "INVALID_WEBHOOK_URL") {
        wrong.push(`${url} (${what}): ${res.status} ${JSON.stringify(json)}`);
      }
    }
    assert.deepEqual(wrong, []);
    assert.equal(await snapshot(app.deps.sql), before);
    assert.equal((await getOne(app, user, hook.id)).json.url, "https://hooks.example.com/safe");
  });
});

Deno.test("names are checked through DNS: private or mixed answers refused, no answer accepted", async () => {
  const dns = {
    "internal.example.com": ["10.1.2.3"],
    "mixed.example.com": ["93.184.216.34", "10.0.0.7"],
    "mixed6.example.com": ["2606:4700:4700::1111", "fd00::5"],
    "loop6.example.com": ["::1"],
    "nat64.example.com": ["64:ff9b::a9fe:a9fe"],
    "metadata.example.com": ["169.254.169.254"],
    "public.example.com": ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"],
  };
  await withService({ dns }, async ({ app }) => {
    const user = await newUser(app, "pro");
    for (
      const host of [
        "internal.example.com",
        "INTERNAL.example.com",
        "mixed.example.com",
        "mixed6.example.com",
        "loop6.example.com",
        "nat64.example.com",
        "metadata.example.com",
      ]
    ) {
      const res = await createRaw(app, user, { url: `https://${host}/hook`, events: ["inbox.created"] });
      await expectError(res, 400, "INVALID_WEBHOOK_URL");
    }
    assert.equal(await countWebhooks(app.deps.sql), 0);

    const pub = await createOk(app, user, "https://public.example.com/hook");
    // A name that does not resolve (yet) is accepted: delivery checks again.
    const unresolved = await createOk(app, user, "https://not-yet-in-dns.example.net/hook");
    assert.equal(unresolved.url, "https://not-yet-in-dns.example.net/hook");

    // The same DNS check on PATCH.
    const before = await snapshot(app.deps.sql);
    await expectError(
      await patch(app, user, pub.id, { url: "https://internal.example.com/x" }),
      400,
      "INVALID_WEBHOOK_URL",
    );
    await expectError(
      await patch(app, user, pub.id, { url: "https://mixed.example.com/x" }),
      400,
      "INVALID_WEBHOOK_URL",
    );
    assert.equal(await snapshot(app.deps.sql), before);
  });
});

Deno.test("a refused localhost URL names WEBHOOK_TRUSTED_HOSTS, the way to allow it in development", async () => {
  await withService({}, async ({ app }) => {
    const user = await newUser(app, "pro");
    const hint = "Webhook URL must point to a public address; for a development receiver, add localhost to " +
      "WEBHOOK_TRUSTED_HOSTS";
    const refused = await expectError(
      await createRaw(app, user, { url: "https://localhost:8443/hook", events: ["inbox.created"] }),
      400,
      "INVALID_WEBHOOK_URL",
      hint,
    );
    assert.deepEqual(refused.details, [{ path: "url", message: "Host name localhost is not publicly resolvable" }]);
    const hook = await createOk(app, user, "https://hooks.example.com/safe");
    await expectError(
      await patch(app, user, hook.id, { url: "https://localhost/hook" }),
      400,
      "INVALID_WEBHOOK_URL",
      hint,
    );
    // The host named is the one to list, in the form the variable matches.
    await expectError(
      await createRaw(app, user, { url: "https://[::1]:8443/hook", events: ["inbox.created"] }),
      400,
      "INVALID_WEBHOOK_URL",
      "Webhook URL must point to a public address; for a development receiver, add [::1] to WEBHOOK_TRUSTED_HOSTS",
    );
  });
});

Deno.test("only loopback hosts get the WEBHOOK_TRUSTED_HOSTS hint; other private addresses the plain refusal", async () => {
  await withService({ dns: { "metadata.example.com": ["169.254.169.254"] } }, async ({ app }) => {
    const user = await newUser(app, "pro");
    const hinted: ReadonlyArray<readonly [string, string]> = [
      ["https://localhost./hook", "localhost."],
      ["https://dev.localhost/hook", "dev.localhost"],
      ["https://127.0.0.1/hook", "127.0.0.1"],
      ["https://127.8.9.10:8443/hook", "127.8.9.10"],
      ["https://[0:0:0:0:0:0:0:1]/hook", "[::1]"],
    ];
    for (const [url, host] of hinted) {
      await expectError(
        await createRaw(app, user, { url, events: ["inbox.created"] }),
        400,
        "INVALID_WEBHOOK_URL",
        `Webhook URL must point to a public address; for a development receiver, add ${host} to WEBHOOK_TRUSTED_HOSTS`,
      );
    }
    const hook = await createOk(app, user, "https://hooks.example.com/safe");
    for (
      const url of [
        "https://169.254.169.254/latest/meta-data/",
        "https://metadata.example.com/hook",
        "https://10.0.0.1/hook",
        "https://192.168.1.20/hook",
        "https://[fd00::1]/hook",
        "https://[::ffff:127.0.0.1]/hook",
        "https://printer.local/hook",
        "https://intranet/hook",
      ]
    ) {
      for (
        const res of [
          await createRaw(app, user, { url, events: ["inbox.created"] }),
          await patch(app, user, hook.id, { url }),
        ]
      ) {
        const refused = await expectError(
          res,
          400,
          "INVALID_WEBHOOK_URL",
          "Webhook URL must point to a public address",
        );
        assert.equal((refused.details as unknown[]).length, 1, url);
      }
    }
  });
});

Deno.test("WEBHOOK_TRUSTED_HOSTS=localhost exempts exactly that host", async () => {
  await withService({ env: { WEBHOOK_TRUSTED_HOSTS: "localhost" } }, async ({ app }) => {
    const user = await newUser(app, "pro");
    const hook = await createOk(app, user, "https://localhost:8443/hook");
    assert.equal(hook.url, "https://localhost:8443/hook");
    for (const url of ["https://evil.localhost/", "https://localhost.evil.localhost/", "https://127.0.0.1:8443/hook"]) {
      await expectError(await createRaw(app, user, { url, events: ["inbox.created"] }), 400, "INVALID_WEBHOOK_URL");
    }
    await expectError(await patch(app, user, hook.id, { url: "https://evil.localhost/" }), 400, "INVALID_WEBHOOK_URL");
    // Still https only.
    await expectError(
      await createRaw(app, user, { url: "http://localhost:8443/hook", events: ["inbox.created"] }),
      400,
      "VALIDATION_ERROR",
    );
    assert.equal(await countWebhooks(app.deps.sql), 1);
  });

  // Without the setting the same URL is refused.
  await withService({}, async ({ app }) => {
    const user = await newUser(app, "pro");
    const res = await createRaw(app, user, { url: "https://localhost:8443/hook", events: ["inbox.created"] });
    await expectError(res, 400, "INVALID_WEBHOOK_URL");
  });
});
