/**
 * Micro-benchmarks of the per-request authentication work that needs no
 * database: key format check and hashing. Run with `deno task bench`.
 */
import { generateApiKey, isWellFormedApiKey } from "../../src/api_keys/key_format.ts";
import { sha256Hex } from "../../src/shared/crypto.ts";

const { key } = generateApiKey();

Deno.bench("generate an API key", { group: "keys" }, () => {
  generateApiKey();
});

Deno.bench("check a key's format and checksum", { group: "keys", baseline: true }, () => {
  isWellFormedApiKey(key);
});

Deno.bench("SHA-256 of a key (the lookup digest)", { group: "keys" }, () => {
  sha256Hex(key);
});
