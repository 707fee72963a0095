/**
 * A relation of a statement that several repo files write together (a CTE
 * one of them defines and another reads): its name and its columns, typed.
 * A column is named only through `col`, so a column that is renamed or
 * dropped where the CTE is defined fails type-checking where it is read,
 * instead of failing the statement at run time.
 */
import type { Db, Fragment } from "./client.ts";

/** A CTE (or table) of a statement and the columns it has. */
export interface Relation<C extends string> {
  /** As a FROM item: `name`. */
  readonly from: Fragment;
  /** One of its columns, qualified: `name.column`. */
  col(column: C): Fragment;
}

/** The relation `name` with the columns `C`. */
export function relation<C extends string>(db: Db, name: string): Relation<C> {
  return {
    from: db`${db(name)}`,
    col: (column) => db`${db(`${name}.${column}`)}`,
  };
}
