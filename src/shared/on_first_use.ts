/**
 * A module (or any value) loaded when first asked for, not at start, and the
 * same promise for every later caller: no trip through the module loader on
 * each request or message. Used for the dependencies that cost RSS at every
 * start but serve only some instances (mailparser 14 MiB, the MCP SDK 11 MiB,
 * the UI's pages and the typed client 2 MiB, the parsed openapi.yaml 32 MiB;
 * tests/bench/README.md, "embedded"; tests/service/start_graph_test.ts).
 */
export function onFirstUse<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () => loaded ??= load();
}
