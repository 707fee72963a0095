/**
 * The SMTP listeners of a real service process on the embedded database:
 * STARTTLS on SMTP_PORT and implicit TLS on SMTPS_PORT serve the self-signed
 * certificate the first start made into DATA_DIR, the second start serves the
 * same one (a client told to trust that file keeps working), and SIGTERM
 * closes both listeners with a clean exit. Mail goes through with an API key
 * as the password (SMTP_AUTH=api-key), as an application would send it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
// @ts-types="npm:@types/nodemailer@8.0.2"
import nodemailer from "npm:nodemailer@10.6.0";
import { ADMIN_TOKEN, apiAt, newApiKey, newUser } from "../_helpers/app.ts";
import { freePort } from "../_helpers/ports.ts";
import { startService } from "../_helpers/process.ts";

/** Sends one message, trusting only `ca`; resolves to the accepted recipients. */
async function send(
  port: number,
  secure: boolean,
  ca: string,
  key: string,
  to: string,
  subject: string,
): Promise<string[]> {
  const transport = nodemailer.createTransport({
    host: "127.0.0.1",
    port,
    secure,
    requireTLS: !secure,
    tls: { ca },
    auth: { user: "app", pass: key },
  });
  try {
    const info = await transport.sendMail({ from: "app@example.com", to, subject, text: "." });
    return info.accepted as string[];
  } finally {
    transport.close();
  }
}

Deno.test("embedded database: STARTTLS and SMTPS serve the certificate kept in DATA_DIR, the same after a restart", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "inbox-smtp-tls-start-" });
  const smtpPort = freePort();
  const smtpsPort = freePort();
  const env = {
    DATA_DIR: dataDir,
    ADMIN_TOKEN,
    SMTP_PORT: String(smtpPort),
    SMTPS_PORT: String(smtpsPort),
    SMTP_AUTH: "api-key",
  };
  try {
    const first = await startService(env);
    let pem: string;
    let key: string;
    let inbox: { id: string; address: string };
    let cookie: string;
    try {
      pem = await Deno.readTextFile(join(dataDir, "smtp-tls.pem"));
      const api = apiAt(first.url);
      const user = await newUser(api, "pro");
      cookie = user.cookie;
      key = (await newApiKey(api, user)).key;
      const created = await api.request("/api/inboxes", { method: "POST", json: {}, cookie });
      inbox = await created.json();
      assert.equal(created.status, 201, JSON.stringify(inbox));
      assert.deepEqual(await send(smtpPort, false, pem, key, inbox.address, "starttls, first start"), [inbox.address]);
      assert.deepEqual(await send(smtpsPort, true, pem, key, inbox.address, "smtps, first start"), [inbox.address]);
    } finally {
      assert.equal(await first.stop(), 0, "clean exit on SIGTERM with both listeners open");
    }

    const second = await startService(env);
    try {
      assert.equal(await Deno.readTextFile(join(dataDir, "smtp-tls.pem")), pem, "the same certificate");
      // Trusting the file read at the first start.
      assert.deepEqual(await send(smtpPort, false, pem, key, inbox.address, "starttls, second start"), [inbox.address]);
      assert.deepEqual(await send(smtpsPort, true, pem, key, inbox.address, "smtps, second start"), [inbox.address]);
      const res = await fetch(`${second.url}/api/inboxes/${inbox.id}/messages`, { headers: { cookie } });
      const list = await res.json() as { data: { subject: string }[] };
      assert.equal(res.status, 200, JSON.stringify(list));
      assert.deepEqual(list.data.map((m) => m.subject).sort(), [
        "smtps, first start",
        "smtps, second start",
        "starttls, first start",
        "starttls, second start",
      ]);
    } finally {
      assert.equal(await second.stop(), 0);
    }
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});
