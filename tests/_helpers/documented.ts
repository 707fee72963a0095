/** Whether a request is an operation of openapi.yaml: its method on one of the document's path templates. */
import { parse } from "yaml";

const doc = parse(await Deno.readTextFile(new URL("../../openapi.yaml", import.meta.url))) as {
  paths: Record<string, Record<string, unknown>>;
};

/** Each documented path as a pattern (`{id}` stands for one path segment), with its methods. */
const OPERATIONS = Object.entries(doc.paths).map(([template, operations]) => ({
  template,
  pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`),
  methods: new Set(Object.keys(operations).map((m) => m.toUpperCase())),
}));

/** The documented path template `method` `url` (a path or a whole URL; the query is ignored) is an operation of, if any. */
export function documentedOperation(method: string, url: string): string | undefined {
  const path = new URL(url, "http://x").pathname;
  const methods = method === "HEAD" ? ["HEAD", "GET"] : [method];
  return OPERATIONS.find((op) => op.pattern.test(path) && methods.some((m) => op.methods.has(m)))?.template;
}
