/**
 * Role mailboxes (postmaster, abuse, admin, ...) cannot be claimed as inboxes:
 * 400 RESERVED_ADDRESS over real HTTP, nothing created, no event, and mail to
 * them is still refused over real SMTP.
 */
import assert from "node:assert/strict";
import { createWebhook, newApiKey, newUser, type TestApp } from "../_helpers/app.ts";
import {
  body,
  countEvents,
  createInbox,
  createInboxRaw,
  expectError,
  MAIL_DOMAIN,
  withInboxes,
} from "../inboxes/_support.ts";
import { sendRaw } from "../smtp/_smtp_client.ts";
import { isReservedLocalPart, RESERVED_LOCAL_PARTS } from "../../src/inboxes/reserved.ts";
import { LOCAL_PART_PATTERN } from "../../src/inboxes/schemas.ts";
import { parse } from "yaml";

/** The names the design and the issue require, whatever else the list holds. */
const REQUIRED = [
  "postmaster",
  "abuse",
  "hostmaster",
  "webmaster",
  "admin",
  "administrator",
  "root",
  "security",
  "noreply",
  "no-reply",
  "mailer-daemon",
  "ssladmin",
  "ssladministrator",
  "sslwebmaster",
  "info",
  "support",
  "www",
  "ftp",
  "usenet",
  "news",
  "uucp",
  "marketing",
  "sales",
  "it",
  "mis",
  "nobody",
  "operator",
  "sysadmin",
];

async function inboxCount(app: TestApp): Promise<number> {
  return (await app.deps.sql`SELECT count(*)::int AS n FROM inboxes`)[0]!.n as number;
}

Deno.test("the reserved list holds every required role mailbox, each a valid local part", () => {
  for (const name of REQUIRED) assert.ok(RESERVED_LOCAL_PARTS.has(name), name);
  for (const name of RESERVED_LOCAL_PARTS) assert.match(name, LOCAL_PART_PATTERN, `${name} could never be asked for`);
});

Deno.test("openapi.yaml lists exactly the reserved names", async () => {
  const doc = parse(await Deno.readTextFile(new URL("../../openapi.yaml", import.meta.url)));
  const description: string = doc.paths["/api/inboxes"].post.description;
  const listed = description.slice(description.indexOf("Role addresses")).match(/`[a-z-]+`/g) ?? [];
  assert.deepEqual(listed.map((n) => n.slice(1, -1)).sort(), [...RESERVED_LOCAL_PARTS].sort());
});

Deno.test("every role mailbox is refused with 400 RESERVED_ADDRESS over HTTP, and nothing is created", async () => {
  await withInboxes(async ({ app, receiver }) => {
    const user = await newUser(app, "business");
    // Subscribed to inbox.created: a created inbox would leave a stored event.
    await createWebhook(app, user, receiver.url("/created"));
    const { key } = await newApiKey(app, user);
    for (const name of RESERVED_LOCAL_PARTS) {
      // Session and API key alike.
      const viaSession = await createInboxRaw(app, user, { localPart: name });
      const refused = await expectError(viaSession, 400, "RESERVED_ADDRESS");
      assert.ok(refused.error.includes(`${name}@${MAIL_DOMAIN}`), refused.error);
      assert.match(refused.error, /reserved/);
      const viaKey = await app.request("/api/inboxes", { method: "POST", json: { localPart: name }, auth: key });
      await expectError(viaKey, 400, "RESERVED_ADDRESS");
    }
    assert.equal(await inboxCount(app), 0);
    assert.equal(await countEvents(app, "inbox.created"), 0);
    const list = await app.request("/api/inboxes", { cookie: user.cookie });
    assert.deepEqual((await body(list)).data, []);
  });
});

Deno.test("other letter cases of role mailboxes are refused too (400), and nothing is created", async () => {
  await withInboxes(async ({ app, receiver }) => {
    const user = await newUser(app, "business");
    await createWebhook(app, user, receiver.url("/created"));
    for (const name of RESERVED_LOCAL_PARTS) {
      const variants = [name.toUpperCase(), name[0]!.toUpperCase() + name.slice(1)];
      for (const variant of variants) {
        const res = await createInboxRaw(app, user, { localPart: variant });
        // Addresses are lowercase: the local-part pattern refuses capitals before the role check.
        const refused = await expectError(res, 400, "VALIDATION_ERROR");
        assert.ok(refused.details?.some((d) => d.path === "localPart"), JSON.stringify(refused));
      }
    }
    assert.equal(await inboxCount(app), 0);
    assert.equal(await countEvents(app, "inbox.created"), 0);
  });
});

Deno.test("the role check ignores letter case and a +tag, should the local-part syntax ever admit them", () => {
  for (const name of REQUIRED) {
    for (const variant of [name, name.toUpperCase(), `${name}+tag`, `${name.toUpperCase()}+x+y`]) {
      assert.ok(isReservedLocalPart(variant), variant);
    }
  }
  for (const free of ["postmasters", "admin1", "my-admin", "root.beer", "info-desk", "abusee", "tag+postmaster"]) {
    assert.ok(!isReservedLocalPart(free), free);
  }
});

Deno.test("names merely close to a role mailbox are still inboxes; mail to a role address is refused", async () => {
  await withInboxes(async ({ app, smtp, receiver }) => {
    const user = await newUser(app, "business");
    await createWebhook(app, user, receiver.url("/created"));
    const near = ["postmasters", "admin1", "my-admin", "root.beer", "info-desk"];
    for (const localPart of near) {
      assert.equal((await createInbox(app, user, { localPart })).address, `${localPart}@${MAIL_DOMAIN}`);
    }
    assert.equal(await countEvents(app, "inbox.created"), near.length, "created inboxes do leave events");
    const sent = await sendRaw(
      smtp.port,
      { from: "ca@example.com", to: [`postmaster@${MAIL_DOMAIN}`, `Admin@${MAIL_DOMAIN}`] },
      "Subject: validate\r\n\r\nx",
    );
    assert.deepEqual(sent.rcpt.map((r) => r.code), [550, 550]);
  });
});

Deno.test("a random local part that would spell a role mailbox is drawn again", async () => {
  await withInboxes(async ({ app }) => {
    const user = await newUser(app, "free");
    // The first 12-byte draw of randomLocalPart spells "sslwebmaster" (byte i -> alphabet[i % 36]).
    const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
    const forced = Uint8Array.from("sslwebmaster", (ch) => alphabet.indexOf(ch));
    const real = crypto.getRandomValues.bind(crypto);
    let forcedOnce = false;
    const stub = (array: Uint8Array) => {
      if (!forcedOnce && array.length === 12) {
        forcedOnce = true;
        array.set(forced);
        return array;
      }
      return real(array);
    };
    crypto.getRandomValues = stub as typeof crypto.getRandomValues;
    try {
      const inbox = await createInbox(app, user, {});
      assert.ok(forcedOnce, "the forced draw was used");
      assert.notEqual(inbox.address, `sslwebmaster@${MAIL_DOMAIN}`);
      assert.match(inbox.address, /^[a-z0-9]{12}@/);
    } finally {
      crypto.getRandomValues = real;
    }
  });
});
