/**
 * The MCP SDK's modules that the server uses, with their types.
 *
 * The SDK exports its subpaths as `"./*": { "types": "./dist/esm/*.d.ts",
 * "import": "./dist/esm/*" }`, so an import written as Node needs it
 * (`.../server/mcp.js`) finds the code but looks for `mcp.js.d.ts`, which
 * does not exist, and Deno then types the whole module as `any` without a
 * word. Each import here names its declarations (the extensionless
 * subpath) with `@ts-types`; type-only imports use the extensionless
 * subpath directly.
 *
 * @module
 */
// @ts-types="@modelcontextprotocol/sdk/server/mcp"
export { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
// @ts-types="@modelcontextprotocol/sdk/server/stdio"
export { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
// @ts-types="@modelcontextprotocol/sdk/server/webStandardStreamableHttp"
export { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
export type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport";
export type {
  CallToolResult,
  JSONRPCMessage,
  MessageExtraInfo,
  ToolAnnotations,
} from "@modelcontextprotocol/sdk/types";
