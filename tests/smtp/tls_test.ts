/**
 * Where the SMTP certificate comes from (src/smtp/tls.ts): kept in DATA_DIR
 * on the embedded database and served again on the next start, made again
 * when it cannot be; made in memory at each start with DATABASE_URL; read
 * from SMTP_TLS_CERT / SMTP_TLS_KEY, and served, when they are set (with a
 * certificate made here by openssl, not by the service), or refused with one
 * line naming the variable.
 */
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { join } from "node:path";
// @ts-types="npm:@types/nodemailer@8.0.2"
import nodemailer from "npm:nodemailer@10.6.0";
import { CERT_FILE, KEY_FILE, resolveSmtpTls, type SmtpTls } from "../../src/smtp/tls.ts";
import { startSmtpServer } from "../../src/smtp/server.ts";
import { ConfigError } from "../../src/shared/config_error.ts";
import { newUser } from "../_helpers/app.ts";
import { createInbox, withInboxes } from "../inboxes/_support.ts";

const DOMAIN = "mail.example.test";
const DAY_MS = 86_400_000;

/** The configuration of the embedded database in `dataDir`, without SMTP_TLS_CERT/KEY. */
const embedded = (dataDir: string, mailDomain = DOMAIN) => ({
  dataDir,
  mailDomain,
  databaseUrl: undefined,
  smtpTlsCert: undefined,
  smtpTlsKey: undefined,
});

async function withTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "inbox-smtp-tls-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** The names a certificate is valid for, as X509Certificate lists them. */
const namesOf = (tls: SmtpTls) => new X509Certificate(tls.cert).subjectAltName ?? "";

Deno.test("embedded database: the self-signed certificate is made into DATA_DIR once, then served again", async () => {
  await withTempDir(async (dir) => {
    const first = await resolveSmtpTls(embedded(dir));
    assert.equal(first.source, "made");
    assert.equal(first.certPath, join(dir, CERT_FILE));
    assert.equal(await Deno.readTextFile(join(dir, CERT_FILE)), first.cert);
    assert.equal(await Deno.readTextFile(join(dir, KEY_FILE)), first.key);
    assert.equal((await Deno.stat(join(dir, KEY_FILE))).mode! & 0o777, 0o600, "the key is private to its owner");
    assert.equal(namesOf(first), `DNS:${DOMAIN}, DNS:localhost, IP Address:127.0.0.1`);
    const days = (first.validTo.getTime() - Date.now()) / DAY_MS;
    assert.ok(days > 364 && days <= 365, `valid for ${days} days`);

    const second = await resolveSmtpTls(embedded(dir));
    assert.equal(second.source, "kept");
    assert.equal(second.cert, first.cert);
    assert.equal(second.key, first.key);
  });
});

Deno.test("embedded database: the kept certificate is made again near its end, for another MAIL_DOMAIN, or when unreadable", async () => {
  await withTempDir(async (dir) => {
    const first = await resolveSmtpTls(embedded(dir));
    // 29 days before its end: replaced. 40 days before: kept.
    const early = await resolveSmtpTls(embedded(dir), new Date(first.validTo.getTime() - 40 * DAY_MS));
    assert.equal(early.source, "kept");
    const late = await resolveSmtpTls(embedded(dir), new Date(first.validTo.getTime() - 29 * DAY_MS));
    assert.equal(late.source, "made");
    assert.notEqual(late.cert, first.cert);

    const renamed = await resolveSmtpTls(embedded(dir, "other.example.test"));
    assert.equal(renamed.source, "made");
    assert.match(namesOf(renamed), /^DNS:other\.example\.test, /);

    await Deno.writeTextFile(join(dir, CERT_FILE), "not a certificate\n");
    const garbage = await resolveSmtpTls(embedded(dir, "other.example.test"));
    assert.equal(garbage.source, "made");

    // A key of another pair beside the certificate (a copy of half of it).
    const { key: otherKey } = await resolveSmtpTls({ ...embedded(dir), databaseUrl: "postgres://unused/db" });
    await Deno.writeTextFile(join(dir, KEY_FILE), otherKey);
    const mismatched = await resolveSmtpTls(embedded(dir, "other.example.test"));
    assert.equal(mismatched.source, "made");
    assert.equal(await Deno.readTextFile(join(dir, KEY_FILE)), mismatched.key);

    await Deno.remove(join(dir, CERT_FILE));
    assert.equal((await resolveSmtpTls(embedded(dir, "other.example.test"))).source, "made");
  });
});

Deno.test("DATABASE_URL: a certificate made in memory at each start, nothing written", async () => {
  await withTempDir(async (dir) => {
    const config = { ...embedded(dir), databaseUrl: "postgres://postgres@127.0.0.1:5432/inbox" };
    const a = await resolveSmtpTls(config);
    const b = await resolveSmtpTls(config);
    assert.equal(a.source, "memory");
    assert.equal(a.certPath, undefined);
    assert.notEqual(a.cert, b.cert, "each start (each instance) its own");
    assert.equal(namesOf(a), `DNS:${DOMAIN}, DNS:localhost, IP Address:127.0.0.1`);
    assert.deepEqual([...Deno.readDirSync(dir)], []);
  });
});

/** A certificate for 127.0.0.1 made by openssl (an EC key, as an operator's may be), into `dir`. */
async function opensslCertificate(dir: string, name: string): Promise<{ cert: string; key: string }> {
  const cert = join(dir, `${name}.pem`);
  const key = join(dir, `${name}.key`);
  const out = await new Deno.Command("openssl", {
    args: [
      ...["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2"],
      ...["-keyout", key, "-out", cert, "-subj", `/CN=${name}`, "-addext", "subjectAltName=IP:127.0.0.1"],
    ],
    stdout: "null",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  return { cert, key };
}

Deno.test("SMTP_TLS_CERT and SMTP_TLS_KEY: the files are served by the listener", async () => {
  await withTempDir(async (dir) => {
    const files = await opensslCertificate(dir, "operator");
    const tls = await resolveSmtpTls({ ...embedded(dir), smtpTlsCert: files.cert, smtpTlsKey: files.key });
    assert.equal(tls.source, "files");
    assert.equal(tls.certPath, files.cert);
    assert.equal(tls.cert, await Deno.readTextFile(files.cert));
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name).sort(), ["operator.key", "operator.pem"]);

    await withInboxes(async ({ app }) => {
      const listener = await startSmtpServer(app.deps, { tls, port: 0 });
      try {
        const user = await newUser(app, "free");
        const inbox = await createInbox(app, user, { localPart: "served" });
        const transport = nodemailer.createTransport({
          host: "127.0.0.1",
          port: listener.port,
          secure: false,
          requireTLS: true,
          // Only the operator's certificate is trusted: the handshake proves it is the one served.
          tls: { ca: tls.cert },
          auth: { user: "app", pass: "password" },
        });
        try {
          const info = await transport.sendMail({ from: "a@example.com", to: inbox.address, subject: "s", text: "." });
          assert.deepEqual(info.accepted, [inbox.address]);
        } finally {
          transport.close();
        }
      } finally {
        await listener.close();
      }
    });
  });
});

Deno.test("SMTP_TLS_CERT and SMTP_TLS_KEY that cannot be served are refused with one line naming the variable", async () => {
  await withTempDir(async (dir) => {
    const a = await opensslCertificate(dir, "a");
    const b = await opensslCertificate(dir, "b");
    const garbage = join(dir, "garbage.pem");
    await Deno.writeTextFile(garbage, "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n");
    const missing = join(dir, "missing.pem");
    const cases: Array<[string, string, string]> = [
      [missing, a.key, `SMTP_TLS_CERT: cannot read ${missing} (no such file or directory)`],
      [a.cert, missing, `SMTP_TLS_KEY: cannot read ${missing} (no such file or directory)`],
      [dir, a.key, `SMTP_TLS_CERT: cannot read ${dir} (it is a directory)`],
      [garbage, a.key, `SMTP_TLS_CERT: ${garbage} does not hold a certificate in PEM`],
      [a.cert, a.cert, `SMTP_TLS_KEY: ${a.cert} does not hold an unencrypted private key in PEM`],
      [a.cert, b.key, `SMTP_TLS_KEY: ${b.key} is not the key of the certificate in ${a.cert}`],
    ];
    for (const [cert, key, message] of cases) {
      await assert.rejects(
        resolveSmtpTls({ ...embedded(dir), smtpTlsCert: cert, smtpTlsKey: key }),
        new ConfigError(message),
      );
    }
  });
});
