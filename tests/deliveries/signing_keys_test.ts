import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { SigningKeyCache } from "../../src/deliveries/signing_keys.ts";
import { signatureHeader, standardSignature } from "../../src/deliveries/signer.ts";

/** An `open` that "decrypts" `ct:<secret>` and counts its calls. */
function counting() {
  const calls: string[] = [];
  const open = (ciphertext: string, webhookId: string) => {
    calls.push(`${webhookId}/${ciphertext}`);
    if (!ciphertext.startsWith("ct:")) return Promise.reject(new Error("Unknown secret format"));
    return Promise.resolve(ciphertext.slice(3));
  };
  return { calls, open };
}

Deno.test("a webhook's secret is decrypted once, and its key signs exactly as the secret does", async () => {
  const { calls, open } = counting();
  const cache = new SigningKeyCache(open);
  const body = '{"id":"evt_1"}';
  for (let i = 0; i < 5; i++) {
    const key = await cache.get("wh_1", "ct:s3cret-s3cret-s3cret");
    assert.equal(
      await signatureHeader(key, body),
      "sha256=" + createHmac("sha256", "s3cret-s3cret-s3cret").update(body).digest("hex"),
    );
  }
  assert.deepEqual(calls, ["wh_1/ct:s3cret-s3cret-s3cret"]);
  const key = await cache.get("wh_1", "ct:s3cret-s3cret-s3cret");
  assert.deepEqual(
    [JSON.stringify(key), Deno.inspect(key, { showHidden: true }), Object.values(key).length],
    ["{}", "SigningSecret {}", 0],
    "the cached key shows nothing of the secret",
  );
});

Deno.test("a cached key of a whsec_<base64> secret keeps both keys: the whole string and the decoded bytes", async () => {
  const { open } = counting();
  const cache = new SigningKeyCache(open);
  const bytes = new Uint8Array(24).fill(5);
  const secret = `whsec_${bytes.toBase64()}`;
  for (let i = 0; i < 2; i++) {
    const key = await cache.get("wh_1", `ct:${secret}`);
    assert.equal(signatureHeader(key, "{}"), "sha256=" + createHmac("sha256", secret).update("{}").digest("hex"));
    assert.equal(
      standardSignature(key, "evt_1", 1700000000, "{}"),
      "v1," + createHmac("sha256", bytes).update("evt_1.1700000000.{}").digest("base64"),
    );
  }
});

Deno.test("a changed secret is another ciphertext: the old key is never used for it", async () => {
  const { calls, open } = counting();
  const cache = new SigningKeyCache(open);
  const body = "{}";
  await cache.get("wh_1", "ct:old-secret-old-secret");
  const key = await cache.get("wh_1", "ct:new-secret-new-secret");
  assert.equal(
    await signatureHeader(key, body),
    "sha256=" + createHmac("sha256", "new-secret-new-secret").update(body).digest("hex"),
  );
  assert.equal(calls.length, 2);
});

Deno.test("a secret that does not decrypt is not remembered", async () => {
  const { calls, open } = counting();
  const cache = new SigningKeyCache(open);
  await assert.rejects(cache.get("wh_1", "garbage"), /Unknown secret format/);
  await assert.rejects(cache.get("wh_1", "garbage"), /Unknown secret format/);
  assert.equal(calls.length, 2, "tried again, not served from the cache");
  assert.equal(cache.size, 0);
});

Deno.test("at most `max` keys are held, the least recently used leaving first", async () => {
  const { calls, open } = counting();
  const cache = new SigningKeyCache(open, 2);
  await cache.get("a", "ct:aaaaaaaaaaaaaaaa");
  await cache.get("b", "ct:bbbbbbbbbbbbbbbb");
  await cache.get("a", "ct:aaaaaaaaaaaaaaaa"); // a is now the most recent
  await cache.get("c", "ct:cccccccccccccccc"); // evicts b
  assert.equal(cache.size, 2);
  await cache.get("a", "ct:aaaaaaaaaaaaaaaa");
  assert.equal(calls.filter((c) => c.startsWith("a/")).length, 1, "a stayed");
  await cache.get("b", "ct:bbbbbbbbbbbbbbbb");
  assert.equal(calls.filter((c) => c.startsWith("b/")).length, 2, "b had left and was decrypted again");
});
