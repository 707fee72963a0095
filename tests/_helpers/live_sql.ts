/**
 * The live SQL's functions as the files define them and as a database holds
 * them, for tests that check a database runs this release's functions.
 */
import type { Db } from "../../src/db/client.ts";
import { LIVE_SQL } from "../../src/db/live_sql.ts";

/** A function definition of a live SQL file: `CREATE OR REPLACE FUNCTION name(...) ... AS $$body$$;`. */
const DEFINITION = /CREATE OR REPLACE FUNCTION (\w+)\(([\s\S]*?)\bAS \$\$([\s\S]*?)\$\$;/g;

/** Every live function's body (what `pg_proc.prosrc` holds once it is created), by name. */
export async function liveFunctionBodies(): Promise<Map<string, string>> {
  const bodies = new Map<string, string>();
  for (const url of LIVE_SQL) {
    for (const m of (await Deno.readTextFile(url)).matchAll(DEFINITION)) bodies.set(m[1]!, m[3]!);
  }
  return bodies;
}

/**
 * SQL that replaces every live function with a body that does nothing, as an
 * older release's functions would be: same signatures, other bodies.
 */
export async function staleFunctionsSql(): Promise<string> {
  const parts: string[] = [];
  for (const url of LIVE_SQL) {
    for (const m of (await Deno.readTextFile(url)).matchAll(DEFINITION)) {
      // A set-returning function ends with a bare RETURN; any other returns a value (NULL does).
      const result = /RETURNS (TABLE|SETOF)\b/i.test(m[2]!) ? "RETURN;" : "RETURN NULL;";
      parts.push(
        `CREATE OR REPLACE FUNCTION ${m[1]}(${m[2]}AS $$\nBEGIN\n  -- An older release.\n  ${result}\nEND\n$$;`,
      );
    }
  }
  return parts.join("\n");
}

/** The functions the live SQL drops (`DROP FUNCTION IF EXISTS name(...)`): gone, or dropped to change a signature. */
export async function droppedFunctionNames(): Promise<Set<string>> {
  const names = new Set<string>();
  for (const url of LIVE_SQL) {
    for (const m of (await Deno.readTextFile(url)).matchAll(/\bDROP\s+FUNCTION\s+IF\s+EXISTS\s+(\w+)/gi)) {
      names.add(m[1]!);
    }
  }
  return names;
}

/** Every function the database holds in `schema`, as `name(arguments)` with the arguments' names, sorted. */
export async function functionSignaturesIn(db: Db, schema: string): Promise<string[]> {
  const rows = await db<{ signature: string }[]>`
    SELECT p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')' AS signature
    FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE n.nspname = ${schema}
    ORDER BY 1`;
  return rows.map((r) => r.signature);
}

/** The bodies of the functions the database holds in `schema`, by name. */
export async function functionBodiesIn(db: Db, schema: string): Promise<Map<string, string>> {
  const rows = await db<{ proname: string; prosrc: string }[]>`
    SELECT p.proname, p.prosrc FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE n.nspname = ${schema}`;
  return new Map(rows.map((r) => [r.proname, r.prosrc]));
}
