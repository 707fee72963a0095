/**
 * Webhook secrets (spec 2.2: write-only, never in any response): absent from
 * every response body and every log line, and stored only as AES-GCM
 * ciphertext bound to the webhook id.
 */
import assert from "node:assert/strict";
import { newUser, TEST_ENCRYPTION_KEY, type TestApp, type User } from "../_helpers/app.ts";
import { capturedLogText } from "../_helpers/log_capture.ts";
import { createSecretBox } from "../../src/secrets/secret_box.ts";
import type { Sql } from "../../src/db/client.ts";
import { withService } from "../_helpers/harness.ts";
import type { Json } from "./_support.ts";

/** Every response body seen by one test, so they can all be scanned at the end. */
class Recorder {
  readonly bodies: string[] = [];
  constructor(private app: TestApp, private user: User) {}

  async call(method: string, path: string, json?: unknown): Promise<{ status: number; json: Json | Json[] }> {
    const res = await this.app.request(path, { method, json, cookie: this.user.cookie });
    const text = await res.text();
    this.bodies.push(text);
    return { status: res.status, json: JSON.parse(text) };
  }

  /** Hits every read endpoint for the webhook, recording what they answer. */
  async readAll(id: string): Promise<void> {
    assert.equal((await this.call("GET", "/api/user-webhooks")).status, 200);
    assert.equal((await this.call("GET", `/api/user-webhooks/${id}`)).status, 200);
  }
}

async function ciphertextOf(sql: Sql, id: string): Promise<string | null> {
  const rows = await sql`SELECT secret_ciphertext FROM webhooks WHERE id = ${id}`;
  assert.equal(rows.length, 1);
  return rows[0]!.secretCiphertext as string | null;
}

// Distinct, recognisable secrets of allowed length (16..256).
const S1 = "whsec-first-Zq8vN3pLr2Tx";
const S2 = "whsec-second-Kd7mW4yHs9Bc-" + "x".repeat(200);
const S3 = "whsec-third-Pf6jQ1uGe5Va";
const REFUSED = "whsec-refused-Ya2bC3dE4fG5"; // sent only in requests that are refused

Deno.test("secrets never appear in responses or logs, and are stored encrypted and bound to the webhook id", async () => {
  await withService({}, async ({ app }) => {
    const user = await newUser(app, "pro");
    const rec = new Recorder(app, user);
    const box = await createSecretBox(TEST_ENCRYPTION_KEY);

    // Create with a secret.
    const created = await rec.call("POST", "/api/user-webhooks", {
      url: "https://hooks.example.com/a",
      events: ["message.received"],
      secret: S1,
    });
    assert.equal(created.status, 201);
    const id = (created.json as Json).id as string;
    await rec.readAll(id);
    const ct1 = await ciphertextOf(app.deps.sql, id);
    assert.ok(ct1 !== null);
    assert.ok(ct1.startsWith("v1."), ct1);
    assert.ok(!ct1.includes(S1));
    assert.ok(!ct1.includes(btoa(S1).slice(0, 16)), "not merely base64 of the secret");
    assert.equal(await box.open(ct1, id), S1);

    // A PATCH of another field keeps the secret as it was.
    assert.equal((await rec.call("PATCH", `/api/user-webhooks/${id}`, { active: false })).status, 200);
    assert.equal(await ciphertextOf(app.deps.sql, id), ct1);

    // PATCH a new secret.
    assert.equal((await rec.call("PATCH", `/api/user-webhooks/${id}`, { secret: S2 })).status, 200);
    await rec.readAll(id);
    const ct2 = await ciphertextOf(app.deps.sql, id);
    assert.ok(ct2 !== null && ct2.startsWith("v1."));
    assert.notEqual(ct2, ct1);
    assert.ok(!ct2.includes(S2));
    assert.equal(await box.open(ct2, id), S2);

    // A second webhook with its own secret; its ciphertext copied onto the first row does not decrypt.
    const other = await rec.call("POST", "/api/user-webhooks", {
      url: "https://hooks.example.com/b",
      events: ["inbox.created"],
      secret: S3,
    });
    assert.equal(other.status, 201);
    const otherId = (other.json as Json).id as string;
    await rec.readAll(otherId);
    const ct3 = (await ciphertextOf(app.deps.sql, otherId))!;
    assert.equal(await box.open(ct3, otherId), S3);
    await app.deps.sql`UPDATE webhooks SET secret_ciphertext = ${ct3} WHERE id = ${id}`;
    await assert.rejects(box.open((await ciphertextOf(app.deps.sql, id))!, id));
    // Restore it through the API: a new secret replaces the copied ciphertext.
    assert.equal((await rec.call("PATCH", `/api/user-webhooks/${id}`, { secret: S1 })).status, 200);
    assert.equal(await box.open((await ciphertextOf(app.deps.sql, id))!, id), S1);

    // Refused requests carrying a secret do not echo it either.
    const refusals: Array<[string, string, unknown]> = [
      ["POST", "/api/user-webhooks", { url: "http://hooks.example.com/c", events: ["inbox.created"], secret: REFUSED }],
      ["POST", "/api/user-webhooks", { url: "https://10.0.0.1/", events: ["inbox.created"], secret: REFUSED }],
      ["POST", "/api/user-webhooks", {
        url: "https://hooks.example.com/a",
        events: ["inbox.created"],
        secret: REFUSED,
      }],
      ["POST", "/api/user-webhooks", { url: "https://hooks.example.com/d", events: ["x"], secret: REFUSED }],
      ["POST", "/api/user-webhooks", {
        url: "https://hooks.example.com/d",
        events: [],
        secret: REFUSED + "!".repeat(240),
      }],
      ["POST", "/api/user-webhooks", {
        url: "https://hooks.example.com/d",
        events: ["inbox.created"],
        sekret: REFUSED,
      }],
      ["PATCH", `/api/user-webhooks/${id}`, { secret: REFUSED, extra: REFUSED }],
      ["PATCH", `/api/user-webhooks/${id}`, { secret: REFUSED + "!".repeat(240) }],
      ["PATCH", "/api/user-webhooks/wh_unknown", { secret: REFUSED }],
    ];
    for (const [method, path, json] of refusals) {
      const res = await rec.call(method, path, json);
      assert.ok(res.status >= 400 && res.status < 500, `${method} ${path}: ${res.status}`);
    }

    // Remove the secret.
    assert.equal((await rec.call("PATCH", `/api/user-webhooks/${id}`, { secret: null })).status, 200);
    await rec.readAll(id);
    assert.equal(await ciphertextOf(app.deps.sql, id), null);
    // A webhook created without a secret has none stored.
    const plain = await rec.call("POST", "/api/user-webhooks", {
      url: "https://hooks.example.com/e",
      events: ["inbox.expired"],
    });
    assert.equal(await ciphertextOf(app.deps.sql, (plain.json as Json).id as string), null);

    // Every field of every answer, not one of them a secret.
    for (const b of rec.bodies) assert.ok(!/secret/i.test(Object.keys(JSON.parse(b)).join(",")), b);
    assert.equal((await rec.call("DELETE", `/api/user-webhooks/${id}`)).status, 200);
    assert.equal((await rec.call("DELETE", `/api/user-webhooks/${otherId}`)).status, 200);
    assert.ok(rec.bodies.length >= 25, `scanned ${rec.bodies.length} bodies`);

    const everything = rec.bodies.join("\n");
    const logs = capturedLogText();
    assert.ok(logs.length > 0, "logs were captured");
    assert.ok(logs.includes("/api/user-webhooks"), "the webhook requests were logged");
    // Secrets in the table are only ciphertext, in any column.
    const table = JSON.stringify(await app.deps.sql`SELECT * FROM webhooks`);
    for (const secret of [S1, S2, S3, REFUSED]) {
      assert.ok(!everything.includes(secret), `a response body contains ${secret}`);
      assert.ok(!logs.includes(secret), `the logs contain ${secret}`);
      assert.ok(!table.includes(secret), `the webhooks table contains ${secret}`);
    }
  });
});
