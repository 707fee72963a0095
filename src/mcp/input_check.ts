/**
 * Tool arguments are checked against the tool's input schema before the SDK
 * sees the call, so that a refusal is a tool result whose text starts with
 * `VALIDATION_ERROR:` like the API's own refusals.
 *
 * Left to itself, `McpServer` (SDK 1.32) refuses such a call with a tool
 * result reading `MCP error -32602: Input validation error: Invalid arguments
 * for tool ...`, and a change proposed upstream would make it a JSON-RPC
 * protocol error, which the model never sees. Checking here, at the
 * transport, uses only the public Transport interface and the same zod
 * schemas the server lists, and holds whatever the SDK does next. A call
 * that passes is handed on untouched (the SDK parses it again, which then
 * succeeds).
 *
 * @module
 */
import type { JSONRPCMessage, MessageExtraInfo, Transport, TransportSendOptions } from "./sdk.ts";
import type { z } from "zod";
import { issuesToDetails } from "../http/validation.ts";
import { failure, validationError } from "./results.ts";

/** A `tools/call` request as it arrives: enough of it to find the tool and its arguments. */
interface ToolCall {
  jsonrpc: "2.0";
  id: string | number;
  method: "tools/call";
  params?: { name?: unknown; arguments?: unknown };
}

function isToolCall(message: JSONRPCMessage): message is JSONRPCMessage & ToolCall {
  return "method" in message && message.method === "tools/call" && "id" in message;
}

/** The refusal of `args` by `schema`, or undefined when they pass. */
export function refuseArguments(
  tool: string,
  schema: z.ZodType,
  args: unknown,
): ReturnType<typeof failure> | undefined {
  const parsed = schema.safeParse(args ?? {});
  if (parsed.success) return undefined;
  return failure(validationError(`Invalid arguments for ${tool}`, issuesToDetails(parsed.error.issues)));
}

/**
 * Wraps `inner` so that a `tools/call` whose arguments fail its tool's schema
 * is answered at once with a VALIDATION_ERROR tool result. Calls of tools not
 * in `schemas` pass through (the SDK answers those).
 */
export function checkToolInput(inner: Transport, schemas: ReadonlyMap<string, z.ZodType>): Transport {
  const outer: Transport = {
    get sessionId() {
      return inner.sessionId;
    },
    async start() {
      inner.onclose = () => outer.onclose?.();
      inner.onerror = (error) => outer.onerror?.(error);
      inner.onmessage = <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => {
        if (isToolCall(message)) {
          const name = message.params?.name;
          const schema = typeof name === "string" ? schemas.get(name) : undefined;
          const refusal = schema && refuseArguments(name as string, schema, message.params?.arguments);
          if (refusal) {
            inner.send({ jsonrpc: "2.0", id: message.id, result: refusal }, { relatedRequestId: message.id })
              .catch((error) => outer.onerror?.(error instanceof Error ? error : new Error(String(error))));
            return;
          }
        }
        outer.onmessage?.(message, extra);
      };
      await inner.start();
    },
    send: (message: JSONRPCMessage, options?: TransportSendOptions) => inner.send(message, options),
    close: () => inner.close(),
    setProtocolVersion: (version: string) => inner.setProtocolVersion?.(version),
  };
  return outer;
}
