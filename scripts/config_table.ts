/**
 * Prints the configuration table of docs/configuration.md from the schema in src/config.ts:
 * variable, default (taken from the schema itself) and meaning (the field's
 * `.describe()`). `deno task config:table`; paste the output between the
 * `<!-- config:start -->` and `<!-- config:end -->` markers in docs/configuration.md
 * (tests/config_test.ts fails until it matches).
 *
 * The table is padded the way `deno fmt` pads Markdown tables, so the page stays
 * format-clean.
 */
import { type EnvName, EnvSchema } from "../src/config.ts";

/** One documented variable. */
export interface ConfigRow {
  name: EnvName;
  default: string;
  meaning: string;
}

const KIB = 1024;
const MIB = 1024 * 1024;

const code = (v: string) => `\`${v}\``;

/** How a default reads in the table: `8000`, `10485760` (10 MiB), unset, empty. */
function formatDefault(name: EnvName, value: unknown): string {
  if (value === undefined) return "unset";
  if (value instanceof Set) return value.size === 0 ? "empty" : code([...value].join(","));
  if (typeof value === "object" && value !== null) {
    return code(Object.entries(value).map(([k, v]) => `${k}=${v}`).join(","));
  }
  if (typeof value === "number" && name.endsWith("_BYTES")) {
    if (value % MIB === 0) return `${code(String(value))} (${value / MIB} MiB)`;
    if (value % KIB === 0) return `${code(String(value))} (${value / KIB} KiB)`;
  }
  return code(String(value));
}

/** The variables in schema order, with their defaults and documentation. */
export function configRows(): ConfigRow[] {
  return (Object.keys(EnvSchema.shape) as EnvName[]).map((name) => {
    const field = EnvSchema.shape[name];
    const meaning = field.description;
    if (!meaning) throw new Error(`${name} has no .describe() in src/config.ts`);
    // What the schema yields when the variable is unset: its default, or undefined.
    const unset = field.safeParse(undefined);
    return { name, default: unset.success ? formatDefault(name, unset.data) : "required", meaning };
  });
}

/** The Markdown table, padded as `deno fmt` pads it, without a trailing newline. */
export function configTable(): string {
  const escape = (cell: string) => cell.replaceAll("|", "\\|");
  const rows = [
    ["Variable", "Default", "Meaning"],
    ...configRows().map((r) => [code(r.name), r.default, r.meaning].map(escape)),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(3, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  const [header, ...body] = rows;
  return [line(header!), line(widths.map((w) => "-".repeat(w))), ...body.map(line)].join("\n");
}

if (import.meta.main) console.log(configTable());
