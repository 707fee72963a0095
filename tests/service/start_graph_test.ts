/**
 * What a start loads: the modules that serve only some instances (the MIME
 * parser, the MCP SDK, the certificate builder, the UI's pages and the typed
 * client) are imported when first used, never by a static import from the
 * entry point, where they would cost RSS on every start of the embedded
 * database (tests/bench/README.md, "embedded"). Read from Deno's own module
 * graph (`deno info --json`), walking static imports only.
 */
import assert from "node:assert/strict";

interface GraphModule {
  specifier: string;
  dependencies?: { code?: { specifier: string }; isDynamic?: boolean }[];
}

const ROOT = new URL("../../", import.meta.url);

/** The modules reached from `src/main.ts` and `src/start.ts` (which main.ts loads on every start) by static imports. */
async function loadedAtStart(): Promise<Set<string>> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", "src/main.ts"],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  const graph = JSON.parse(new TextDecoder().decode(out.stdout)) as {
    modules: GraphModule[];
    redirects: Record<string, string>;
  };
  const bySpecifier = new Map(graph.modules.map((m) => [m.specifier, m]));
  const seen = new Set<string>();
  const pending = [new URL("src/main.ts", ROOT).href, new URL("src/start.ts", ROOT).href];
  while (pending.length > 0) {
    const specifier = pending.pop()!;
    const resolved = graph.redirects[specifier] ?? specifier;
    if (seen.has(resolved)) continue;
    seen.add(resolved);
    for (const dep of bySpecifier.get(resolved)?.dependencies ?? []) {
      if (dep.code && !dep.isDynamic) pending.push(dep.code.specifier);
    }
  }
  return seen;
}

Deno.test("a start imports the parser, the MCP SDK, node-forge, the UI's pages and the client only when first used", async () => {
  const loaded = [...await loadedAtStart()];
  // The walk itself reaches what every start needs.
  for (const needed of ["src/start.ts", "src/smtp/server.ts", "src/ui/routes.ts", "src/mcp/http.ts"]) {
    assert.ok(loaded.includes(new URL(needed, ROOT).href), `${needed} is loaded at start`);
  }
  assert.ok(loaded.some((s) => s.startsWith("npm:/smtp-server@")), "smtp-server is loaded at start");
  const later = [
    "npm:/mailparser@",
    "npm:/htmlparser2@",
    "npm:/@modelcontextprotocol/sdk@",
    "npm:/node-forge@",
    "npm:/openapi-fetch@",
    new URL("src/smtp/parse.ts", ROOT).href,
    new URL("src/messages/prepare.ts", ROOT).href,
    new URL("src/ui/handlers.ts", ROOT).href,
    new URL("src/client/mod.ts", ROOT).href,
  ];
  for (const prefix of later) {
    assert.deepEqual(loaded.filter((s) => s.startsWith(prefix)), [], `${prefix} is not imported at start`);
  }
});
