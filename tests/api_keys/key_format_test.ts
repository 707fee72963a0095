/** The API key format: prefix, randomness, and an offline-checkable checksum. */
import assert from "node:assert/strict";
import { generateApiKey, isWellFormedApiKey, KEY_PREFIX } from "../../src/api_keys/key_format.ts";

Deno.test("keys have the prefix, 42 base62 characters in all, and distinct values", () => {
  const seen = new Set<string>();
  for (let i = 0; i < 2000; i++) {
    const { key, keyPrefix } = generateApiKey();
    assert.match(key, /^isk_[0-9A-Za-z]{38}$/);
    assert.ok(key.startsWith(KEY_PREFIX));
    assert.equal(keyPrefix, key.slice(0, 12));
    assert.ok(isWellFormedApiKey(key));
    seen.add(key);
  }
  assert.equal(seen.size, 2000);
});

Deno.test("the checksum catches any single-character change", () => {
  const { key } = generateApiKey();
  const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  let checked = 0;
  for (let i = KEY_PREFIX.length; i < key.length; i++) {
    for (const ch of alphabet) {
      if (ch === key[i]) continue;
      const changed = key.slice(0, i) + ch + key.slice(i + 1);
      assert.equal(isWellFormedApiKey(changed), false, changed);
      checked++;
    }
  }
  assert.equal(checked, 38 * 61);
});

Deno.test("look-alikes are refused", () => {
  const { key } = generateApiKey();
  for (const candidate of ["", "isk_", key + "x", key.slice(0, -1), "ghp_" + key.slice(4), key.toLowerCase()]) {
    if (candidate === key) continue;
    assert.equal(isWellFormedApiKey(candidate), false, candidate);
  }
});
