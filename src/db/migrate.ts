/**
 * Applies the numbered SQL files of `migrations/` in order, once each, then
 * every owner's live SQL (`live_sql.ts`), at every start.
 *
 * Everything runs in one transaction under a transaction-level advisory lock,
 * so instances starting together queue behind each other instead of racing,
 * and a failed migration leaves nothing half-applied.
 *
 * Numbered migrations are history: each is recorded with the SHA-256 of its
 * file, and a start whose file differs from the one the database applied, or
 * that lacks a migration the database applied, is refused before anything
 * changes. An edited migration would otherwise reach new databases only,
 * while every existing one silently kept what it applied. What must follow
 * the release instead (stored functions) is live SQL, written with CREATE OR
 * REPLACE and applied after the migrations at every start, under the same lock.
 */
import { fileURLToPath } from "node:url";
import { getLogger } from "@logtape/logtape";
import { ConfigError } from "../shared/config_error.ts";
import { sha256Hex } from "../shared/crypto.ts";
import type { Sql } from "./client.ts";
import { LIVE_SQL } from "./live_sql.ts";
import {
  adoptChecksum,
  type AppliedMigration,
  appliedMigrations,
  ensureMigrationTable,
  recordMigration,
  takeMigrationLock,
} from "./repo.ts";

/** Any fixed number works; it only has to be the same for every instance. */
const MIGRATION_LOCK_KEY = 7_316_245_001;

/** The project's root: messages name files from there, as a user of `deno task start` or the image sees them. */
const ROOT = new URL("../../", import.meta.url);

const log = getLogger(["inbox", "db"]);

/** A migration: its version (the file's number), name and SQL. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
  /** SHA-256 (hex) of the file's bytes; that of `sql` in UTF-8 when not given. */
  checksum?: string;
  /** The file as messages name it; `NNNN_name.sql` when not given. */
  file?: string;
}

/** A file of live SQL: its name for messages, and its statements. */
export interface LiveSql {
  file: string;
  sql: string;
}

/** `url` as messages show it: relative to the project's root when it is inside. */
function displayPath(url: URL): string {
  if (url.protocol !== "file:") return url.href;
  if (url.href.startsWith(ROOT.href)) return decodeURIComponent(url.href.slice(ROOT.href.length));
  return fileURLToPath(url);
}

/** Reads the migration files shipped beside this module. */
export async function loadMigrations(dir = new URL("./migrations/", import.meta.url)): Promise<Migration[]> {
  const migrations: Migration[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const match = /^(\d{4})_([a-z0-9_]+)\.sql$/.exec(entry.name);
    if (!entry.isFile || !match) continue;
    const url = new URL(entry.name, dir);
    const bytes = await Deno.readFile(url);
    migrations.push({
      version: Number(match[1]),
      name: match[2]!,
      sql: new TextDecoder().decode(bytes),
      checksum: sha256Hex(bytes),
      file: displayPath(url),
    });
  }
  return migrations.sort((a, b) => a.version - b.version);
}

/** Reads the live SQL files (every owner's, by default). */
export async function loadLiveSql(files: readonly URL[] = LIVE_SQL): Promise<LiveSql[]> {
  return await Promise.all(files.map(async (url) => ({ file: displayPath(url), sql: await Deno.readTextFile(url) })));
}

/** `NNNN_name.sql`: how a migration is named when there is no file to name. */
function fileName(m: { version: number; name: string }): string {
  return `${String(m.version).padStart(4, "0")}_${m.name}.sql`;
}

function checksumOf(m: Migration): string {
  return m.checksum ?? sha256Hex(m.sql);
}

/** The refusal of a start whose migration file is not the one the database applied. */
function differs(m: Migration, detail: string): ConfigError {
  return new ConfigError(
    `Migration ${
      m.file ?? fileName(m)
    } differs from the one this database applied (${detail}); applied migrations are history: restore the file and add a new migration`,
  );
}

/** The refusal of a database that a newer release migrated. */
function newerDatabase(unknown: AppliedMigration[], migrations: Migration[]): ConfigError {
  const names = unknown.map(fileName).join(", ");
  const last = migrations.at(-1);
  return new ConfigError(
    `This database has applied ${unknown.length === 1 ? "migration" : "migrations"} ${names}, which this release ` +
      `does not have${last ? ` (its last is ${fileName(last)})` : ""}: a newer release migrated it; ` +
      `start that release or a newer one`,
  );
}

/**
 * Compares what the database applied with this release's migrations: throws
 * the refusal when they disagree, and otherwise returns the migrations whose
 * rows have no checksum yet.
 */
function checkHistory(applied: AppliedMigration[], migrations: Migration[]): Migration[] {
  const byVersion = new Map(migrations.map((m) => [m.version, m]));
  const unknown = applied.filter((row) => !byVersion.has(row.version));
  if (unknown.length > 0) throw newerDatabase(unknown, migrations);
  const unrecorded: Migration[] = [];
  for (const row of applied) {
    const m = byVersion.get(row.version)!;
    if (row.name !== m.name) throw differs(m, `it applied ${fileName(row)}`);
    const checksum = checksumOf(m);
    if (row.checksum === null) unrecorded.push(m);
    else if (row.checksum !== checksum) {
      throw differs(m, `checksum ${row.checksum.slice(0, 12)} applied, ${checksum.slice(0, 12)} in the file`);
    }
  }
  return unrecorded;
}

/**
 * Applies pending migrations, then the live SQL; returns the versions of the
 * migrations it applied. Throws a ConfigError (one line naming the file) when
 * the database's history disagrees with this release's migrations.
 */
export async function migrate(sql: Sql, migrations?: Migration[], live?: LiveSql[]): Promise<number[]> {
  const all = migrations ?? await loadMigrations();
  const liveSql = live ?? await loadLiveSql();
  const { applied, adopted } = await sql.begin(async (tx) => {
    await takeMigrationLock(tx, MIGRATION_LOCK_KEY);
    await ensureMigrationTable(tx);
    const rows = await appliedMigrations(tx);
    // Rows from before checksums were kept are trusted on this first start
    // (their files cannot be checked against what was applied): the one
    // migration changed after it was applied, 0012, made functions, which the
    // live SQL below replaces whatever an earlier file made, and dropped two
    // indexes, which 0014 drops where they are left.
    const unrecorded = checkHistory(rows, all);
    for (const m of unrecorded) await adoptChecksum(tx, m.version, checksumOf(m));
    const done = new Set(rows.map((r) => r.version));
    const applied: number[] = [];
    for (const m of all) {
      if (done.has(m.version)) continue;
      await tx.unsafe(m.sql);
      await recordMigration(tx, m.version, m.name, checksumOf(m));
      applied.push(m.version);
    }
    // At every start, not once: the functions follow the release that runs.
    for (const file of liveSql) await tx.unsafe(file.sql);
    return { applied, adopted: unrecorded.map((m) => m.version) };
  });
  // Once committed: a start that failed later recorded nothing.
  if (adopted.length > 0) {
    log.info("Recorded the checksums of migrations {versions}, applied before checksums were kept", {
      versions: adopted,
    });
  }
  return applied;
}
