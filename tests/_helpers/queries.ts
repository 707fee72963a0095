/** A stand-in `sql` for tests that watch, or fail, the queries a piece of code runs. */
import type { Sql } from "../../src/db/client.ts";

/**
 * `sql` whose queries go through `gate` when they run: the nth (from 1) runs
 * unless `gate(n)` returns an error, which it then fails with. A query counts
 * when it is run (awaited); a fragment, which is only written into another
 * query, never is.
 */
export function interceptQueries(
  sql: Sql,
  gate: (n: number) => Error | undefined,
): { sql: Sql; queries: () => number } {
  let queries = 0;
  const proxy = new Proxy(sql, {
    apply(target, thisArg, args) {
      const query = Reflect.apply(target, thisArg, args);
      const run = query.then.bind(query);
      query.then = (ok: (v: unknown) => unknown, failed: (e: unknown) => unknown) => {
        const error = gate(++queries);
        return error === undefined ? run(ok, failed) : Promise.reject(error).then(ok, failed);
      };
      return query;
    },
  });
  return { sql: proxy, queries: () => queries };
}
