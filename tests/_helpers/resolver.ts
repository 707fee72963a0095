/** Resolvers answering from a table, so no test needs DNS. */
import type { Resolver } from "../../src/url_safety/resolver.ts";

/** Answers from `table` (lower-case names), as it is at each lookup: a test may change it. */
export function tableResolver(table: ReadonlyMap<string, readonly string[]>): Resolver {
  return (hostname) => Promise.resolve([...(table.get(hostname.toLowerCase()) ?? [])]);
}

/** `map` as a table for tableResolver: names lower-cased, address lists copied. */
export function dnsTable(map: Record<string, string[]>): Map<string, string[]> {
  return new Map(Object.entries(map).map(([name, addresses]) => [name.toLowerCase(), [...addresses]]));
}

/** Answers the addresses of `map` (names in any case); unknown names give []. */
export function staticResolver(map: Record<string, string[]>): Resolver {
  return tableResolver(dnsTable(map));
}
