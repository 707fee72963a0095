/**
 * `deno task mcp`: the MCP tools over stdio, for an agent on this machine.
 * The tools call the service's HTTP API at `INBOX_BASE_URL` (default
 * `http://localhost:8000`) with the key in `INBOX_API_KEY`, the same calls
 * `/mcp` makes in process, so the key's scopes and inbox restriction apply
 * here too.
 *
 * stdout carries the protocol and nothing else; the refusal to start is one
 * line on stderr (exit code 2), and never shows the key.
 *
 * @module
 */
import { createClient } from "../client/mod.ts";
import { ToolError } from "./results.ts";
import { StdioServerTransport } from "./sdk.ts";
import { connectMcpServer } from "./server.ts";

const DEFAULT_BASE_URL = "http://localhost:8000";

/** Where and as whom the tools call the API, or the one line that says why not. */
export function stdioSettings(env: { get(name: string): string | undefined }):
  | { baseUrl: string; apiKey: string }
  | { refusal: string } {
  const apiKey = env.get("INBOX_API_KEY")?.trim() ?? "";
  if (apiKey === "") {
    return { refusal: "INBOX_API_KEY is not set: set it to an API key of the Inbox Service (isk_...)" };
  }
  const baseUrl = env.get("INBOX_BASE_URL")?.trim() || DEFAULT_BASE_URL;
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return { refusal: `INBOX_BASE_URL is not a URL: ${JSON.stringify(baseUrl)}` };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return { refusal: `INBOX_BASE_URL must be an http or https URL, not ${JSON.stringify(baseUrl)}` };
  }
  return { baseUrl, apiKey };
}

/** `fetch`, with a service that cannot be reached reported as a tool error the model can act on. */
function fetchReporting(baseUrl: string): (request: Request) => Promise<Response> {
  return async (request) => {
    try {
      return await fetch(request);
    } catch (err) {
      if (request.signal.aborted) throw err;
      const cause = err instanceof Error ? err.message : String(err);
      throw new ToolError("SERVICE_UNAVAILABLE", `The Inbox Service at ${baseUrl} could not be reached (${cause})`);
    }
  };
}

async function main(): Promise<void> {
  const settings = stdioSettings(Deno.env);
  if ("refusal" in settings) {
    console.error(settings.refusal);
    Deno.exit(2);
  }
  const api = createClient({ ...settings, fetch: fetchReporting(settings.baseUrl) });
  await connectMcpServer(api, new StdioServerTransport());
}

if (import.meta.main) await main();
