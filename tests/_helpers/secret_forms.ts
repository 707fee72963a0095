/**
 * Forms of webhook secrets and how independent verifiers read them, shared by
 * the signer, verifier and interoperability tests. What a Standard Webhooks
 * library takes as its key is written out here, never derived from the
 * project's own rule.
 */

/** A secret, and whether Standard Webhooks libraries decode it (`whsec_<base64>`) rather than take its UTF-8 bytes. */
export interface SecretForm {
  secret: string;
  decoded: boolean;
}

/** The key `new Webhook(key)` of npm standardwebhooks takes to verify what was signed with `secret`. */
export function standardWebhooksKeyOf({ secret, decoded }: SecretForm): string {
  return decoded ? secret : `whsec_${new TextEncoder().encode(secret).toBase64()}`;
}

/**
 * Secrets at the edges of "whsec_<base64>": `decoded` only for well-formed
 * standard base64; otherwise the whole secret's UTF-8 bytes are the key of
 * both schemes. None of them changes X-Webhook-Signature's key (the secret as
 * it is).
 */
export const SECRET_EDGES: (SecretForm & { why: string })[] = [
  { secret: `whsec_${"q".repeat(32)}`, decoded: true, why: "no padding needed" },
  { secret: `whsec_${new Uint8Array(17).fill(7).toBase64()}`, decoded: true, why: "one = of padding" },
  { secret: `whsec_${new Uint8Array(16).fill(7).toBase64()}`, decoded: true, why: "two = of padding" },
  { secret: "whsec_AAAAAAAAAAAAAAAAAAAAAB==", decoded: true, why: "bits after the last byte are ignored" },
  { secret: "whsec_+/+/+/+/+/+/+/+/", decoded: true, why: "+ and / are standard base64" },
  { secret: `whsec_${new Uint8Array(16).fill(7).toBase64().replace(/=+$/, "")}`, decoded: false, why: "unpadded" },
  { secret: "whsec_-_-_-_-_-_-_-_-_", decoded: false, why: "base64url, not standard base64" },
  { secret: "whsec_AAAAAAAAAAAAAAAAAAAA====", decoded: false, why: "padding beyond two =" },
  { secret: "whsec_AAAA==AAAAAAAAAAAAAAAA", decoded: false, why: "padding before the end" },
  { secret: "whsec_AAAAAAAA AAAAAAAAAAA", decoded: false, why: "a space inside" },
  { secret: "whsec_AAAAAAAAAAAAAAAAAAAAAAAA\n", decoded: false, why: "a trailing newline" },
  { secret: "whsec_not*base64!at-all_1234", decoded: false, why: "not base64 at all" },
  { secret: "WHSEC_AAAAAAAAAAAAAAAAAAAAAAAA", decoded: false, why: "the prefix in upper case" },
  { secret: "whsec_", decoded: false, why: "nothing after the prefix" },
  { secret: "plain-sëcret-0123456789", decoded: false, why: "no prefix, not ASCII" },
];
