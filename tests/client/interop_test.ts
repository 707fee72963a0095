/**
 * Real deliveries from the service, captured at an HTTPS receiver, verify with
 * third-party libraries as well as ours: @octokit/webhooks-methods (GitHub's
 * `sha256=` scheme, the X-Webhook-Signature header) and npm standardwebhooks
 * (the webhook-id / webhook-timestamp / webhook-signature headers). A tampered
 * body fails all three.
 */
import assert from "node:assert/strict";
import { verify as octokitVerify } from "npm:@octokit/webhooks-methods@6.0.0";
import { Webhook as StandardWebhook } from "npm:standardwebhooks@1.1.1";
import { createClient, parseWebhookEvent, verifyWebhookSignature } from "../../src/client/mod.ts";
import { newApiKey } from "../_helpers/app.ts";
import { startHarness } from "../_helpers/harness.ts";
import type { ReceivedRequest } from "../_helpers/receiver.ts";

// Deliberately not ASCII: the key is the secret's UTF-8 bytes on every side.
const SECRET = "interop-secret-ünïcödé-0123456789";

/** Standard Webhooks libraries take the key as `whsec_` + base64 of the secret's bytes. */
function standardWebhooksKey(secret: string): string {
  return "whsec_" + btoa(String.fromCharCode(...new TextEncoder().encode(secret)));
}

/** The three verifications of one captured request, with `body` in place of the received one. */
async function verifyAll(req: ReceivedRequest, body: string) {
  const signature = req.headers["x-webhook-signature"];
  assert.ok(signature, "the delivery is signed");
  let standard: unknown;
  try {
    standard = new StandardWebhook(standardWebhooksKey(SECRET)).verify(body, req.headers);
  } catch (err) {
    standard = err;
  }
  let parsed: unknown;
  try {
    parsed = await parseWebhookEvent(body, req.headers, SECRET);
  } catch (err) {
    parsed = err;
  }
  return {
    octokit: await octokitVerify(SECRET, body, signature),
    standard,
    ours: await verifyWebhookSignature(body, signature, SECRET),
    parsed,
  };
}

async function assertInterop(req: ReceivedRequest, type: string): Promise<void> {
  assert.equal(req.method, "POST");
  assert.equal(req.headers["x-webhook-event"], type);
  const good = await verifyAll(req, req.body);
  assert.equal(good.octokit, true, "@octokit/webhooks-methods accepts the X-Webhook-Signature");
  assert.deepEqual(good.standard, JSON.parse(req.body), "standardwebhooks accepts the webhook-signature");
  assert.equal(good.ours, true, "verifyWebhookSignature accepts it");
  assert.deepEqual(good.parsed, JSON.parse(req.body), "parseWebhookEvent returns the event");
  assert.equal((good.parsed as { type: string }).type, type);
  assert.equal((good.parsed as { id: string }).id, req.headers["webhook-id"]);

  for (
    const tampered of [
      req.body.replace(/"createdAt":"/, '"createdAt":"1'),
      req.body + "\n",
      JSON.stringify(JSON.parse(req.body), null, 1),
    ]
  ) {
    const bad = await verifyAll(req, tampered);
    assert.equal(bad.octokit, false, "@octokit/webhooks-methods refuses a tampered body");
    assert.ok(bad.standard instanceof Error, "standardwebhooks refuses a tampered body");
    assert.match((bad.standard as Error).message, /signature/i);
    assert.equal(bad.ours, false, "verifyWebhookSignature refuses a tampered body");
    assert.ok(bad.parsed instanceof Error && bad.parsed.name === "WebhookVerificationError");
  }
}

Deno.test("real deliveries verify with @octokit/webhooks-methods, standardwebhooks and our verifier", async () => {
  // The wall clock: standardwebhooks checks the signature's timestamp against the real time.
  const h = await startHarness({ receiver: true, user: "pro", startDeliveries: true, systemClock: true });
  const { app, receiver, user } = h;
  try {
    const { key } = await newApiKey(app, user);
    const client = createClient({ baseUrl: app.baseUrl, apiKey: key });
    const { data: webhook, error } = await client.webhooks.create({
      url: receiver.url("/hook"),
      events: ["inbox.created"],
      secret: SECRET,
    });
    assert.ok(webhook, JSON.stringify(error));

    // The test endpoint: a signed `test` event, sent synchronously.
    const { data: result } = await client.webhooks.test(webhook.id);
    assert.equal(result?.success, true, JSON.stringify(result));
    const [testDelivery] = await receiver.waitFor(1);
    await assertInterop(testDelivery!, "test");

    // A real event from the queue: inbox.created.
    const { data: inbox } = await client.inboxes.create({});
    assert.ok(inbox);
    const [, created] = await receiver.waitFor(2, 10_000);
    await assertInterop(created!, "inbox.created");
    const event = await parseWebhookEvent(created!.body, created!.headers, SECRET);
    assert.ok(event.type === "inbox.created" && event.data.address === inbox.address);
  } finally {
    await h.close();
  }
});
