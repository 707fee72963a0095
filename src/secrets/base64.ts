/** Standard base64 of bytes, both ways (Deno std is not reachable here). */
import { Buffer } from "node:buffer";

/** Bytes to standard base64. */
export function encodeBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("base64");
}

/** Standard base64 to bytes; throws on anything that is not base64. */
export function decodeBase64(text: string): Uint8Array<ArrayBuffer> {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text.trim())) throw new Error("Not base64");
  const buf = Buffer.from(text.trim(), "base64");
  return new Uint8Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) as ArrayBuffer);
}
