/**
 * Prints the table of docs/api.md of what each operation needs from an API key, from
 * the one table of src/auth/scopes.ts: `deno task scopes:table`; paste the
 * output between the `<!-- scopes:start -->` and `<!-- scopes:end -->`
 * markers in docs/api.md (tests/api_keys/scopes_table_test.ts fails until
 * it matches). Padded as `deno fmt` pads Markdown tables.
 */
import { type Need, OPERATION_NEEDS } from "../src/auth/scopes.ts";

const WHAT: Record<Need, string> = {
  "any": "any key or session",
  "keys": "a session, or a key with every scope and no `inboxIds`",
  "inboxes:read": "`inboxes:read`",
  "inboxes:write": "`inboxes:write`",
  "webhooks:read": "`webhooks:read`",
  "webhooks:write": "`webhooks:write`",
  "events:read": "`events:read`",
};

/** The table's lines. */
export function scopesTable(): string[] {
  const rows = Object.entries(OPERATION_NEEDS).map(([op, need]) => [`\`${op}\``, WHAT[need]]);
  const header = ["Operation", "Needs"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  return [line(header), `| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`, ...rows.map(line)];
}

if (import.meta.main) console.log(scopesTable().join("\n"));
