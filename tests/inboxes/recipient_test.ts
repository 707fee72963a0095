/** Recipient addresses read as inboxes' (sub-addressing): the inbox, and the address the message keeps. */
import assert from "node:assert/strict";
import { recipientOf } from "../../src/inboxes/recipient.ts";

const DOMAIN = "inbox.localhost";

Deno.test("an address with a tag is its inbox's; the tag keeps its case, the rest is matched in any case", () => {
  assert.deepEqual(recipientOf("ci@inbox.localhost", DOMAIN), {
    inbox: "ci@inbox.localhost",
    to: "ci@inbox.localhost",
  });
  assert.deepEqual(recipientOf("CI@Inbox.LocalHost", DOMAIN), {
    inbox: "ci@inbox.localhost",
    to: "ci@inbox.localhost",
  });
  assert.deepEqual(recipientOf("Ci+Test-42.a_b@INBOX.localhost", DOMAIN), {
    inbox: "ci@inbox.localhost",
    to: "ci+Test-42.a_b@inbox.localhost",
  });
  assert.deepEqual(recipientOf(`ci+${"x".repeat(64)}@inbox.localhost`, DOMAIN)?.inbox, "ci@inbox.localhost");
});

Deno.test("not an inbox's address: another domain, a bad tag, a second +, a bad local part", () => {
  for (
    const address of [
      "ci@elsewhere.example",
      "ci+@inbox.localhost",
      `ci+${"x".repeat(65)}@inbox.localhost`,
      "ci+a+b@inbox.localhost",
      "ci+a b@inbox.localhost",
      "ci+ü@inbox.localhost",
      "+tag@inbox.localhost",
      "-ci@inbox.localhost",
      "@inbox.localhost",
      "ci",
    ]
  ) {
    assert.equal(recipientOf(address, DOMAIN), undefined, address);
  }
});
