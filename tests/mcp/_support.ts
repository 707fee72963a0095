/**
 * The MCP tests' client side: the SDK's own `Client` over its Streamable
 * HTTP and stdio transports, as an agent's host would connect, and small
 * readers of tool results. (The `@ts-types` lines name the SDK's
 * declarations: src/mcp/sdk.ts says why.)
 */
import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types";
import { CLOSE_TAG, OPEN_TAG, UNTRUSTED_PREAMBLE } from "../../src/mcp/untrusted.ts";

export { Client, StdioClientTransport, StreamableHTTPClientTransport };
export type { CallToolResult };

export const ROOT = new URL("../../", import.meta.url);

/** The names of the tools, in the order the server lists them. */
export const TOOL_NAMES = [
  "create_inbox",
  "list_inboxes",
  "delete_inbox",
  "list_messages",
  "get_message",
  "wait_for_message",
  "get_verification_code",
];

/** A client connected to `<baseUrl>/mcp` with `Authorization: Bearer <key>`. */
export async function connectHttp(baseUrl: string, key: string): Promise<Client> {
  const client = new Client({ name: "inbox-service-tests", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL("/mcp", baseUrl), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  return client;
}

/** Runs `fn` with a client connected over HTTP, and closes it afterwards. */
export async function withHttpClient(
  baseUrl: string,
  key: string,
  fn: (client: Client) => Promise<void>,
): Promise<void> {
  const client = await connectHttp(baseUrl, key);
  try {
    await fn(client);
  } finally {
    await client.close();
  }
}

/** Calls a tool; the result as the SDK client gives it. */
export async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return await client.callTool({ name, arguments: args }) as CallToolResult;
}

/** The text of a result's one text item. */
export function textOf(result: CallToolResult): string {
  assert.equal(result.content.length, 1, `one content item: ${JSON.stringify(result.content)}`);
  const item = result.content[0]!;
  assert.equal(item.type, "text");
  return (item as { text: string }).text;
}

/** Asserts a success; its structured content. */
export function structured<T = Record<string, unknown>>(result: CallToolResult): T {
  assert.ok(!result.isError, `expected a success, got ${JSON.stringify(result.content)}`);
  assert.ok(result.structuredContent, "a success carries structured content");
  return result.structuredContent as T;
}

/** Asserts a tool error whose text starts with `code: `; returns the text. */
export function toolError(result: CallToolResult, code: string): string {
  assert.equal(result.isError, true, `expected a tool error, got ${JSON.stringify(result)}`);
  const text = textOf(result);
  assert.ok(text.startsWith(`${code}: `), `the error starts with ${code}: ${text}`);
  return text;
}

/** Counts non-overlapping occurrences of `needle` in `text`. */
export function occurrences(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

/**
 * Asserts `text` holds exactly one wrapper, in order: the preamble line
 * right before the opening tag, the closing tag once; returns what is inside.
 */
export function insideOneWrapper(text: string): string {
  assert.equal(occurrences(text, OPEN_TAG), 1, `one opening tag in:\n${text}`);
  assert.equal(occurrences(text, CLOSE_TAG), 1, `one closing tag in:\n${text}`);
  assert.ok(text.includes(`${UNTRUSTED_PREAMBLE}\n${OPEN_TAG}\n`), `the preamble line comes right before:\n${text}`);
  const start = text.indexOf(OPEN_TAG) + OPEN_TAG.length;
  const end = text.indexOf(CLOSE_TAG);
  assert.ok(end > start, "the closing tag comes after the opening one");
  return text.slice(start, end);
}
