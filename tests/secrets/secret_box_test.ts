/** Unit tests of the at-rest encryption of webhook secrets (AES-256-GCM, id bound as additional data). */
import assert from "node:assert/strict";
import { createSecretBox } from "../../src/secrets/secret_box.ts";
import { TEST_ENCRYPTION_KEY } from "../_helpers/app.ts";

const OTHER_KEY = new Uint8Array(32).fill(7).toBase64();

/** The sealed form with one byte of its payload flipped. */
function flipByte(sealed: string, index: number): string {
  const bytes = Uint8Array.fromBase64(sealed.slice("v1.".length));
  const at = index < 0 ? bytes.length + index : index;
  bytes[at] = bytes[at]! ^ 0x01;
  return `v1.${bytes.toBase64()}`;
}

Deno.test("seal then open gives the plaintext back, for ASCII, Unicode and the longest secret", async () => {
  const box = await createSecretBox(TEST_ENCRYPTION_KEY);
  for (const secret of ["whsec_0123456789abcdef", "sécret-ключ-秘密-🔑-0123", "x".repeat(256)]) {
    const sealed = await box.seal(secret, "wh_1");
    assert.ok(sealed.startsWith("v1."), sealed);
    assert.ok(!sealed.includes(secret));
    // 12-byte IV + ciphertext (as long as the UTF-8 plaintext) + 16-byte tag.
    const payload = Uint8Array.fromBase64(sealed.slice(3));
    assert.equal(payload.length, 12 + new TextEncoder().encode(secret).length + 16);
    assert.equal(await box.open(sealed, "wh_1"), secret);
  }
});

Deno.test("sealing twice gives different ciphertexts (fresh IV) that both open", async () => {
  const box = await createSecretBox(TEST_ENCRYPTION_KEY);
  const a = await box.seal("same-secret-0123456789", "wh_1");
  const b = await box.seal("same-secret-0123456789", "wh_1");
  assert.notEqual(a, b);
  assert.notEqual(a.slice(3, 19), b.slice(3, 19), "the IVs differ");
  assert.equal(await box.open(a, "wh_1"), "same-secret-0123456789");
  assert.equal(await box.open(b, "wh_1"), "same-secret-0123456789");
});

Deno.test("a box with the same key opens what another sealed; a box with another key does not", async () => {
  const one = await createSecretBox(TEST_ENCRYPTION_KEY);
  const two = await createSecretBox(TEST_ENCRYPTION_KEY);
  const other = await createSecretBox(OTHER_KEY);
  const sealed = await one.seal("shared-secret-0123456789", "wh_1");
  assert.equal(await two.open(sealed, "wh_1"), "shared-secret-0123456789");
  await assert.rejects(other.open(sealed, "wh_1"));
});

Deno.test("the ciphertext is bound to the id it was sealed for", async () => {
  const box = await createSecretBox(TEST_ENCRYPTION_KEY);
  const sealed = await box.seal("bound-secret-0123456789", "wh_a");
  assert.equal(await box.open(sealed, "wh_a"), "bound-secret-0123456789");
  for (const id of ["wh_b", "", "wh_a ", "WH_A"]) {
    await assert.rejects(box.open(sealed, id), `id ${JSON.stringify(id)}`);
  }
});

Deno.test("tampered or malformed ciphertexts fail to open", async () => {
  const box = await createSecretBox(TEST_ENCRYPTION_KEY);
  const sealed = await box.seal("tamper-secret-0123456789", "wh_1");
  await assert.rejects(box.open(flipByte(sealed, 0), "wh_1"), "IV byte");
  await assert.rejects(box.open(flipByte(sealed, 12), "wh_1"), "ciphertext byte");
  await assert.rejects(box.open(flipByte(sealed, -1), "wh_1"), "tag byte");
  const payload = sealed.slice(3);
  const malformed = [
    `v2.${payload}`,
    payload,
    "v1.",
    "v1",
    "",
    `v1.${Uint8Array.fromBase64(payload).slice(0, -1).toBase64()}`, // truncated tag
    `v1.${Uint8Array.fromBase64(payload).slice(0, 20).toBase64()}`, // shorter than IV + tag
    `v1.${payload.slice(0, -4)}!!!!`, // not base64
  ];
  for (const bad of malformed) await assert.rejects(box.open(bad, "wh_1"), JSON.stringify(bad));
  // The untouched form still opens: the failures above come from the changes.
  assert.equal(await box.open(sealed, "wh_1"), "tamper-secret-0123456789");
});

Deno.test("a key that is not 32 bytes of base64 is refused when the box is created", async () => {
  const keys = [
    new Uint8Array(16).toBase64(),
    new Uint8Array(31).toBase64(),
    new Uint8Array(33).toBase64(),
    new Uint8Array(64).toBase64(),
    "",
    "not base64 at all!",
  ];
  for (const key of keys) await assert.rejects(createSecretBox(key), JSON.stringify(key));
  await createSecretBox(new Uint8Array(32).fill(1).toBase64());
});

Deno.test("a key with whitespace around it is accepted; whitespace inside, or base64url, is not base64", async () => {
  const key = new Uint8Array(32).fill(3).toBase64();
  const sealed = await (await createSecretBox(key)).seal("spaced-secret-0123456789", "wh_1");
  for (const padded of [` ${key}`, `${key}\n`, `\t${key}\r\n`]) {
    assert.equal(await (await createSecretBox(padded)).open(sealed, "wh_1"), "spaced-secret-0123456789");
  }
  const urlKey = new Uint8Array(32).fill(0xfb).toBase64({ alphabet: "base64url" });
  assert.ok(/[-_]/.test(urlKey));
  for (const bad of [`${key.slice(0, 20)} ${key.slice(20)}`, `${key.slice(0, 20)}\n${key.slice(20)}`, urlKey]) {
    await assert.rejects(createSecretBox(bad), JSON.stringify(bad));
  }
  // The same rule holds for a stored payload.
  const box = await createSecretBox(key);
  const payload = sealed.slice(3);
  await assert.rejects(box.open(`v1.${payload.slice(0, 8)} ${payload.slice(8)}`, "wh_1"));
});
