/**
 * Mail in as applications send it: nodemailer configured as an application
 * configures it (host, port, `secure: false` with STARTTLS, a username and a
 * password) against the listener in each SMTP_AUTH mode, implicit TLS on a
 * second listener, SMTP_REQUIRE_TLS, and plain unauthenticated mail, which
 * every mode still accepts. Each message sent is read back over the API.
 *
 * The client trusts only the listener's certificate (`tls: { ca }`, never
 * `rejectUnauthorized: false`), so a delivery over TLS proves that the
 * certificate served is that one, valid for 127.0.0.1.
 */
import assert from "node:assert/strict";
// @ts-types="npm:@types/nodemailer@8.0.2"
import nodemailer from "npm:nodemailer@10.6.0";
import type SMTPTransport from "npm:@types/nodemailer@8.0.2/lib/smtp-transport/index.d.ts";
import { ADMIN_TOKEN, type Api, newApiKey, newUser, TEST_CA_PEM, type User } from "../_helpers/app.ts";
import { capturedLogText } from "../_helpers/log_capture.ts";
import { testSmtpTls } from "../_helpers/smtp_tls.ts";
import { body, createInbox, type Json, withInboxes } from "../inboxes/_support.ts";
import { startSmtpServer } from "../../src/smtp/server.ts";
import { SmtpConversation } from "./_smtp_client.ts";

const { cert: CERT } = await testSmtpTls();

/** What nodemailer is told besides host and port: TLS, credentials, pooling. */
type Options = Omit<SMTPTransport.Options, "host" | "port">;

/** Sends one message through a transport with `options`; resolves to nodemailer's answer. */
async function send(
  port: number,
  to: string,
  subject: string,
  options: Options,
): Promise<SMTPTransport.SentMessageInfo> {
  const transport = nodemailer.createTransport({ host: "127.0.0.1", port, ...options });
  try {
    return await transport.sendMail({ from: "App <app@example.com>", to, subject, text: `Body of ${subject}.` });
  } finally {
    transport.close();
  }
}

/** The SMTP error nodemailer rejects with: its reply code and the whole reply line. */
async function refusal(
  sending: Promise<unknown>,
): Promise<{ responseCode?: number; response?: string; code?: string }> {
  try {
    await sending;
  } catch (err) {
    return err as { responseCode?: number; response?: string; code?: string };
  }
  throw new Error("the message was accepted");
}

/** The subjects of the inbox's messages, as the API lists them. */
async function subjects(app: Api, user: User, inboxId: string): Promise<string[]> {
  const res = await app.request(`/api/inboxes/${inboxId}/messages`, { cookie: user.cookie });
  const list = await body(res);
  assert.equal(res.status, 200, JSON.stringify(list));
  return (list.data as Json[]).map((m) => m.subject as string).sort();
}

/** STARTTLS required (nodemailer fails if it is not offered) and only the listener's certificate trusted. */
const STARTTLS: Options = { secure: false, requireTLS: true, tls: { ca: CERT } };
/** No STARTTLS even where offered: a client that sends in the clear. */
const PLAIN: Options = { secure: false, ignoreTLS: true };

Deno.test("SMTP_AUTH=any (default): STARTTLS and AUTH with any username and password deliver; so does AUTH without TLS and mail without AUTH", async () => {
  await withInboxes(async ({ app, smtp }) => {
    const user = await newUser(app, "free");
    const inbox = await createInbox(app, user, { localPart: "app" });

    const info = await send(smtp.port, inbox.address, "tls and auth", {
      ...STARTTLS,
      auth: { user: "whoever", pass: "whatever" },
    });
    assert.deepEqual(info.accepted, [inbox.address]);
    assert.match(info.response, /^250 /);
    await send(smtp.port, inbox.address, "auth in the clear", { ...PLAIN, auth: { user: "u", pass: "p" } });
    await send(smtp.port, inbox.address, "no auth", PLAIN);
    await send(smtp.port, inbox.address, "tls without auth", STARTTLS);

    // Trusting another CA, the handshake fails: the client checked the certificate it was given.
    const untrusted = await refusal(
      send(smtp.port, inbox.address, "other ca", {
        ...STARTTLS,
        tls: { ca: TEST_CA_PEM },
        auth: { user: "u", pass: "p" },
      }),
    );
    assert.match(
      (untrusted as { originalCode?: string }).originalCode ?? "",
      /SELF_SIGNED|UNABLE_TO_VERIFY/,
      JSON.stringify(untrusted),
    );

    assert.deepEqual(await subjects(app, user, inbox.id), [
      "auth in the clear",
      "no auth",
      "tls and auth",
      "tls without auth",
    ]);
  });
});

Deno.test("SMTP_AUTH=api-key: a live key delivers to its account's inboxes only; a wrong, revoked or other account's key is refused; mail without AUTH still arrives", async () => {
  await withInboxes(async ({ app, smtp }) => {
    const owner = await newUser(app, "pro");
    const { key, id: keyId } = await newApiKey(app, owner);
    const inbox = await createInbox(app, owner, { localPart: "orders" });
    const other = await newUser(app, "pro");
    const { key: otherKey } = await newApiKey(app, other);
    const otherInbox = await createInbox(app, other, { localPart: "elsewhere" });

    // Any username: the password is the key.
    await send(smtp.port, inbox.address, "with the key", { ...STARTTLS, auth: { user: "ci@example.com", pass: key } });
    // AUTH LOGIN as well as PLAIN (nodemailer picks PLAIN unless told).
    await send(smtp.port, inbox.address, "with the key over LOGIN", {
      ...STARTTLS,
      auth: { user: "ci", pass: key, method: "LOGIN" },
    });

    const wrong = await refusal(
      send(smtp.port, inbox.address, "wrong", { ...STARTTLS, auth: { user: "ci", pass: "secret" } }),
    );
    assert.equal(wrong.code, "EAUTH");
    assert.equal(wrong.responseCode, 535);
    assert.match(wrong.response ?? "", /^535 5\.7\.8 Authentication credentials invalid$/);

    // Before STARTTLS the credential is refused without being checked.
    const clear = await refusal(send(smtp.port, inbox.address, "clear", { ...PLAIN, auth: { user: "ci", pass: key } }));
    assert.equal(clear.responseCode, 530);
    assert.match(clear.response ?? "", /^530 5\.7\.0 Must issue a STARTTLS command first$/);

    // Another account's key reaches that account's inboxes, not this one's.
    const foreign = await refusal(
      send(smtp.port, inbox.address, "foreign", { ...STARTTLS, auth: { user: "ci", pass: otherKey } }),
    );
    assert.equal(foreign.code, "EENVELOPE");
    assert.equal(foreign.responseCode, 550);
    await send(smtp.port, otherInbox.address, "own inbox", { ...STARTTLS, auth: { user: "ci", pass: otherKey } });

    // Mail without AUTH is accepted in this mode too (the service is an MX), with TLS or without.
    await send(smtp.port, inbox.address, "no auth", PLAIN);
    await send(smtp.port, otherInbox.address, "no auth, tls", STARTTLS);

    // A pooled connection authenticated with the key, then the key revoked: the next message is refused at
    // MAIL FROM, and a new connection with it at AUTH.
    const pooled = nodemailer.createTransport({
      host: "127.0.0.1",
      port: smtp.port,
      pool: true,
      maxConnections: 1,
      ...STARTTLS,
      auth: { user: "ci", pass: key },
    });
    try {
      const mail = (subject: string) =>
        pooled.sendMail({ from: "app@example.com", to: inbox.address, subject, text: "." });
      await mail("pooled before revocation");
      const revoked = await app.request(`/api/api-keys/${keyId}`, { method: "DELETE", cookie: owner.cookie });
      assert.equal(revoked.status, 200);
      await revoked.body?.cancel();
      const afterRevocation = await refusal(mail("pooled after revocation"));
      assert.equal(afterRevocation.responseCode, 530, JSON.stringify(afterRevocation));
    } finally {
      pooled.close();
    }
    const revokedKey = await refusal(
      send(smtp.port, inbox.address, "revoked", { ...STARTTLS, auth: { user: "ci", pass: key } }),
    );
    assert.equal(revokedKey.responseCode, 535);

    assert.deepEqual(await subjects(app, owner, inbox.id), [
      "no auth",
      "pooled before revocation",
      "with the key",
      "with the key over LOGIN",
    ]);
    assert.deepEqual(await subjects(app, other, otherInbox.id), ["no auth, tls", "own inbox"]);

    // The refusals were logged (at info), and no password or key, in the clear or as AUTH PLAIN sent it.
    const logged = capturedLogText();
    assert.match(logged, /535 5\.7\.8/);
    for (const secret of [key, otherKey, "secret"]) {
      assert.ok(!logged.includes(secret), "a password is in the log");
      assert.ok(!logged.includes(btoa(`\0ci\0${secret}`)), "an AUTH PLAIN token is in the log");
    }
  }, { env: { SMTP_AUTH: "api-key" } });
});

Deno.test("SMTP_AUTH=api-key over the raw protocol: AUTH before STARTTLS is 530, a bad key or one of a plan without keys 535 5.7.8, RCPT to another account 550", async () => {
  await withInboxes(async ({ app, smtp }) => {
    const owner = await newUser(app, "pro");
    const { key } = await newApiKey(app, owner);
    const other = await newUser(app, "pro");
    const otherInbox = await createInbox(app, other, { localPart: "theirs" });
    // A key made on the Pro plan, whose account the operator has since moved to Free (which has no API keys).
    const downgraded = await newUser(app, "pro");
    const { key: downgradedKey } = await newApiKey(app, downgraded);
    const planChange = await app.request(`/admin/accounts/${downgraded.id}`, {
      method: "PATCH",
      json: { plan: "free" },
      auth: ADMIN_TOKEN,
    });
    assert.equal(planChange.status, 200);
    await planChange.body?.cancel();
    const plain = (password: string) => btoa(`\0ci\0${password}`);

    const smtpConn = await SmtpConversation.open(smtp.port);
    try {
      const ehlo = await smtpConn.command("EHLO client.test");
      assert.match(ehlo.text, /^STARTTLS$/m);
      assert.match(ehlo.text, /^AUTH PLAIN LOGIN$/m);
      assert.deepEqual(await smtpConn.command(`AUTH PLAIN ${plain(key)}`), {
        code: 530,
        text: "5.7.0 Must issue a STARTTLS command first",
      });
      assert.equal((await smtpConn.startTls(CERT)).code, 220);
      assert.equal((await smtpConn.command("EHLO client.test")).code, 250);
      for (const password of ["isk_not_a_key", downgradedKey]) {
        assert.deepEqual(await smtpConn.command(`AUTH PLAIN ${plain(password)}`), {
          code: 535,
          text: "5.7.8 Authentication credentials invalid",
        });
      }
      assert.equal((await smtpConn.command(`AUTH PLAIN ${plain(key)}`)).code, 235);
      assert.equal((await smtpConn.command("MAIL FROM:<app@example.com>")).code, 250);
      const rcpt = await smtpConn.command(`RCPT TO:<${otherInbox.address}>`);
      assert.equal(rcpt.code, 550, rcpt.text);
      assert.match(rcpt.text, /not one the API key used in AUTH reaches/);
    } finally {
      await smtpConn.quit();
    }
  }, { env: { SMTP_AUTH: "api-key" } });
});

Deno.test("SMTP_AUTH=off: AUTH is not offered, STARTTLS is, and mail without AUTH is accepted", async () => {
  await withInboxes(async ({ app, smtp }) => {
    const user = await newUser(app, "free");
    const inbox = await createInbox(app, user, { localPart: "mx" });
    const conn = await SmtpConversation.open(smtp.port);
    try {
      const ehlo = await conn.command("EHLO client.test");
      assert.doesNotMatch(ehlo.text, /AUTH/);
      assert.match(ehlo.text, /^STARTTLS$/m);
      assert.equal((await conn.command("AUTH PLAIN AGNpAHA=")).code, 500, "AUTH is not a command here");
    } finally {
      await conn.quit();
    }
    await send(smtp.port, inbox.address, "plain", PLAIN);
    await send(smtp.port, inbox.address, "tls", STARTTLS);
    assert.deepEqual(await subjects(app, user, inbox.id), ["plain", "tls"]);
  }, { env: { SMTP_AUTH: "off" } });
});

Deno.test("SMTP_REQUIRE_TLS=true: MAIL FROM before STARTTLS is 530; after STARTTLS the mail is accepted", async () => {
  await withInboxes(async ({ app, smtp }) => {
    const user = await newUser(app, "free");
    const inbox = await createInbox(app, user, { localPart: "secure" });
    const clear = await refusal(send(smtp.port, inbox.address, "clear", PLAIN));
    assert.equal(clear.responseCode, 530);
    assert.match(clear.response ?? "", /^530 5\.7\.0 Must issue a STARTTLS command first$/);
    await send(smtp.port, inbox.address, "after starttls", STARTTLS);
    await send(smtp.port, inbox.address, "after starttls, with auth", { ...STARTTLS, auth: { user: "u", pass: "p" } });
    assert.deepEqual(await subjects(app, user, inbox.id), ["after starttls", "after starttls, with auth"]);
  }, { env: { SMTP_REQUIRE_TLS: "true" } });
});

Deno.test("implicit TLS (the SMTPS_PORT listener): TLS from the first byte, the same certificate and rules", async () => {
  await withInboxes(async ({ app }) => {
    const smtps = await startSmtpServer(app.deps, { tls: await testSmtpTls(), implicitTls: true, port: 0 });
    try {
      const owner = await newUser(app, "pro");
      const { key } = await newApiKey(app, owner);
      const inbox = await createInbox(app, owner, { localPart: "smtps" });
      const SMTPS: Options = { secure: true, tls: { ca: CERT } };
      await send(smtps.port, inbox.address, "over smtps with the key", { ...SMTPS, auth: { user: "ci", pass: key } });
      await send(smtps.port, inbox.address, "over smtps without auth", SMTPS);
      const wrong = await refusal(
        send(smtps.port, inbox.address, "wrong", { ...SMTPS, auth: { user: "ci", pass: "x" } }),
      );
      assert.equal(wrong.responseCode, 535);
      // A client that speaks plain SMTP to it gets no greeting it can read.
      const plainClient = await refusal(
        send(smtps.port, inbox.address, "plain", { ...PLAIN, connectionTimeout: 2_000 }),
      );
      assert.ok(plainClient.code, JSON.stringify(plainClient));
      assert.deepEqual(await subjects(app, owner, inbox.id), ["over smtps with the key", "over smtps without auth"]);
    } finally {
      await smtps.close();
    }
  }, { env: { SMTP_AUTH: "api-key", SMTP_REQUIRE_TLS: "true" } });
});

Deno.test("SMTP_AUTH=api-key with a key limited to one inbox: RCPT to another inbox of the same account is 550", async () => {
  await withInboxes(async ({ app, smtp }) => {
    const owner = await newUser(app, "pro");
    const mine = await createInbox(app, owner, { localPart: "mine" });
    const other = await createInbox(app, owner, { localPart: "other" });
    const res = await app.request("/api/api-keys", {
      method: "POST",
      json: { name: "sender", inboxIds: [mine.id] },
      cookie: owner.cookie,
    });
    const { key } = await body(res) as { key: string };
    const smtpConn = await SmtpConversation.open(smtp.port);
    try {
      assert.equal((await smtpConn.command("EHLO client.test")).code, 250);
      assert.equal((await smtpConn.startTls(CERT)).code, 220);
      assert.equal((await smtpConn.command("EHLO client.test")).code, 250);
      assert.equal((await smtpConn.command(`AUTH PLAIN ${btoa(`\0ci\0${key}`)}`)).code, 235);
      assert.equal((await smtpConn.command("MAIL FROM:<app@example.com>")).code, 250);
      assert.equal((await smtpConn.command(`RCPT TO:<${mine.address}>`)).code, 250);
      const refused = await smtpConn.command(`RCPT TO:<${other.address}>`);
      assert.equal(refused.code, 550, refused.text);
      assert.match(refused.text, /not one the API key used in AUTH reaches/);
    } finally {
      await smtpConn.quit();
    }
  }, { env: { SMTP_AUTH: "api-key" } });
});
