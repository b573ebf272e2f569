/**
 * What a backup must pass before `svc catalog restore` makes it the catalog (docs/OPERATIONS.md
 * "Restore"). A backup is a file someone hands us, so nothing in it runs before it is checked:
 *  1. the candidate is opened read-only (`query_only`, `trusted_schema` off) and only
 *     `sqlite_master` is read: its objects must be exactly DuckLake's tables and svc's own, as
 *     their DDL defines them (src/lake/catalog/schema-check.ts: no trigger, view, extra table or
 *     index); then `PRAGMA integrity_check`;
 *  2. only then it is copied (`VACUUM INTO`, which copies and runs nothing of it) to a private file
 *     beside the catalog, and the copy, which nobody else writes, is what the rest checks and what
 *     is swapped in: the schema again, the DuckLake metadata and duplicate-key checks, schema and
 *     table names (not reserved, src/lake/names.ts, nor carrying path or control characters), and
 *     every path it holds (schema and table directories, data and delete files of every snapshot,
 *     files scheduled for deletion), resolved as DuckLake resolves them, inside the data path: no
 *     `..`, not into the quarantine, and no symbolic link on the way leading out of it.
 * Each refusal is one line naming what is wrong.
 */
import { Database } from "bun:sqlite";
import { existsSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve, sep } from "node:path";
import { AppError } from "../../core/index.ts";
import { catalogSchemaProblems } from "../catalog/index.ts";
import { reservedSchemaProblem, tableNameProblem } from "../names.ts";
import { QUARANTINE_DIR } from "./lake-files.ts";

const refuse = (source: string, what: string) =>
  new AppError("VALIDATION", `backup ${source} refused, nothing changed: ${what}`, { details: { source } });

function schemaCheck(db: Database, source: string): void {
  const problems = catalogSchemaProblems(db);
  if (problems.length > 0)
    throw refuse(source, `${problems[0]}${problems.length > 1 ? ` (and ${problems.length - 1} more problem(s))` : ""}`);
}

/** Opens a SQLite file read-only so that nothing stored in it can act (views and triggers never run; no writes). */
function openInert(path: string, source: string): Database {
  let db: Database;
  try {
    db = new Database(path, { readonly: true });
  } catch (e) {
    throw refuse(source, `not a SQLite database (${e instanceof Error ? e.message : String(e)})`);
  }
  try {
    db.run("PRAGMA query_only = ON");
    db.run("PRAGMA trusted_schema = OFF");
  } catch (e) {
    db.close();
    throw e;
  }
  return db;
}

/**
 * Step 1 and the copy: `source` checked (schema from sqlite_master, then integrity) and copied to
 * `dest` with VACUUM INTO. Throws VALIDATION naming the first problem; `dest` is not written then.
 */
export function copyCheckedBackup(source: string, dest: string): void {
  const db = openInert(source, source);
  try {
    try {
      schemaCheck(db, source);
    } catch (e) {
      if (e instanceof AppError) throw e;
      throw refuse(source, `its schema cannot be read (${e instanceof Error ? e.message : String(e)})`);
    }
    const bad = db
      .query<{ integrity_check: string }, []>("PRAGMA integrity_check")
      .all()
      .filter((r) => r.integrity_check !== "ok");
    if (bad.length > 0)
      throw refuse(
        source,
        `SQLite integrity check failed: ${bad[0]!.integrity_check}${bad.length > 1 ? ` (and ${bad.length - 1} more)` : ""}`,
      );
    // query_only would refuse VACUUM INTO's write to `dest`; the connection stays read-only.
    db.run("PRAGMA query_only = OFF");
    db.run("VACUUM INTO ?", [dest]);
  } finally {
    db.close();
  }
}

/** Characters no name or path of a catalog of ours holds: control characters (and NUL). */
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Why a schema or table name cannot be restored, or undefined. */
function hostileName(name: string | null): string | undefined {
  if (name === null || name === "") return "an empty name";
  if (CONTROL.test(name)) return `name ${JSON.stringify(name)} holds a control character`;
  if (name.includes("/") || name.includes("\\") || name === "." || name === "..")
    return `name ${JSON.stringify(name)} holds a path character`;
  return undefined;
}

/** Step 2, names: every schema and table row (historical ones too), reserved names for live ones. */
function checkNames(db: Database, source: string): void {
  const schemas = db
    .query<{ schema_name: string | null; end_snapshot: number | null }, []>(
      "SELECT schema_name, end_snapshot FROM ducklake_schema",
    )
    .all();
  for (const s of schemas) {
    const bad =
      hostileName(s.schema_name) ?? (s.end_snapshot === null ? reservedSchemaProblem(s.schema_name!) : undefined);
    if (bad) throw refuse(source, `schema: ${bad}`);
  }
  const tables = db
    .query<{ schema_name: string | null; table_name: string | null; live: number }, []>(
      `SELECT s.schema_name, t.table_name, (t.end_snapshot IS NULL AND s.end_snapshot IS NULL) AS live
       FROM ducklake_table t LEFT JOIN ducklake_schema s ON s.schema_id = t.schema_id`,
    )
    .all();
  const live = new Set(
    tables
      .filter((t) => t.live && t.schema_name !== null && t.table_name !== null)
      .map((t) => `${t.schema_name}.${t.table_name}`.toLowerCase()),
  );
  for (const t of tables) {
    const bad =
      hostileName(t.table_name) ??
      (t.live && t.schema_name !== null
        ? tableNameProblem(t.schema_name, t.table_name!, (s, n) => live.has(`${s}.${n}`.toLowerCase()))
        : undefined);
    if (bad) throw refuse(source, `table ${JSON.stringify(`${t.schema_name}.${t.table_name}`)}: ${bad}`);
  }
}

/** `abs` with its deepest existing ancestor (itself when it exists) resolved through links. */
function realPrefix(abs: string): string {
  const tail: string[] = [];
  let p = abs;
  while (!existsSync(p)) {
    const up = dirname(p);
    if (up === p) return abs;
    tail.unshift(basename(p));
    p = up;
  }
  return join(realpathSync(p), ...tail);
}

interface PathJudge {
  dataPath: string;
  realData: string;
  quarantine: string;
}

/** Why a stored path (`parts` as stored, `abs` as resolved) cannot be restored, or undefined. */
function pathProblem(j: PathJudge, parts: Array<string | null>, abs: string): string | undefined {
  const raw = parts.filter((x): x is string => x !== null);
  if (raw.some((x) => CONTROL.test(x))) return "holds a control character";
  if (raw.some((x) => x.split(/[/\\]/).includes(".."))) return `holds a ".." segment (${JSON.stringify(raw.join(""))})`;
  const full = resolve(abs);
  if (!`${full}${sep}`.startsWith(j.dataPath))
    return `resolves to ${JSON.stringify(full)}, outside the data path ${j.dataPath}`;
  if (`${full}${sep}`.startsWith(j.quarantine)) return `resolves into the quarantine folder ${j.quarantine}`;
  const real = realPrefix(full);
  if (!`${real}${sep}`.startsWith(j.realData))
    return `leads through a symbolic link to ${JSON.stringify(real)}, outside the data path ${j.dataPath}`;
  return undefined;
}

/** Step 2, paths: resolved as DuckLake resolves them (src/lake/catalog/maintenance.ts tableDirs), each inside the data path. */
function checkPaths(db: Database, source: string, dataPath: string): void {
  const data = dataPath.endsWith(sep) ? dataPath : `${dataPath}${sep}`;
  const realData = `${realPrefix(resolve(data))}${sep}`;
  const j: PathJudge = { dataPath: data, realData, quarantine: `${data}${QUARANTINE_DIR}${sep}` };
  const under = (dir: string) => (isAbsolute(dir) ? dir : `${data}${dir}`);
  const fail = (what: string, problem: string) => refuse(source, `${what} ${problem}`);
  for (const s of db
    .query<{ schema_id: number; path: string | null; rel: number | null }, []>(
      "SELECT schema_id, path, path_is_relative AS rel FROM ducklake_schema",
    )
    .all()) {
    const bad = pathProblem(j, [s.path], under(s.path ?? ""));
    if (bad) throw fail(`the directory of schema ${s.schema_id}`, bad);
  }
  const dirs = new Map<number, Array<{ parts: Array<string | null>; dir: string }>>();
  const tables = db
    .query<{ table_id: number; t_path: string | null; t_rel: number | null; s_path: string | null }, []>(
      "SELECT t.table_id, t.path AS t_path, t.path_is_relative AS t_rel, s.path AS s_path FROM ducklake_table t LEFT JOIN ducklake_schema s ON s.schema_id = t.schema_id",
    )
    .all();
  for (const t of tables) {
    const parts = t.t_rel === 0 ? [t.t_path] : [t.s_path, t.t_path];
    const dir = under(t.t_rel === 0 ? (t.t_path ?? "") : `${t.s_path ?? ""}${t.t_path ?? ""}`);
    const bad = pathProblem(j, parts, dir);
    if (bad) throw fail(`the directory of table ${t.table_id}`, bad);
    dirs.set(t.table_id, [...(dirs.get(t.table_id) ?? []), { parts, dir: dir.endsWith(sep) ? dir : `${dir}${sep}` }]);
  }
  for (const kind of [
    { table: "ducklake_data_file", id: "data_file_id", what: "data file" },
    { table: "ducklake_delete_file", id: "delete_file_id", what: "delete file" },
  ]) {
    const rows = db
      .query<{ id: number; table_id: number; path: string | null; rel: number | null }, []>(
        `SELECT ${kind.id} AS id, table_id, path, path_is_relative AS rel FROM ${kind.table}`,
      )
      .all();
    for (const f of rows) {
      if (f.path === null || f.path === "") throw fail(`${kind.what} ${f.id}`, "has no path");
      const absolute = f.rel === 0 || isAbsolute(f.path);
      // A file of a table with no directory row resolves against the data path, as the catalog does.
      for (const d of absolute
        ? [{ parts: [] as Array<string | null>, dir: "" }]
        : (dirs.get(f.table_id) ?? [{ parts: [], dir: data }])) {
        const bad = pathProblem(j, [...d.parts, f.path], absolute ? f.path : `${d.dir}${f.path}`);
        if (bad) throw fail(`${kind.what} ${f.id} of table ${f.table_id}`, bad);
      }
    }
  }
  for (const f of db
    .query<{ id: number; path: string | null; rel: number | null }, []>(
      "SELECT data_file_id AS id, path, path_is_relative AS rel FROM ducklake_files_scheduled_for_deletion",
    )
    .all()) {
    if (f.path === null || f.path === "") throw fail(`file ${f.id} scheduled for deletion`, "has no path");
    const bad = pathProblem(j, [f.path], f.rel === 0 || isAbsolute(f.path) ? f.path : `${data}${f.path}`);
    if (bad) throw fail(`file ${f.id} scheduled for deletion`, bad);
  }
}

/** Step 2 on the private copy: schema again, names, paths. Throws VALIDATION naming the first problem. */
export function checkRestoreCopy(copy: string, source: string, dataPath: string): void {
  const db = openInert(copy, source);
  try {
    schemaCheck(db, source);
    // Rows inlined into the catalog live in tables of their own, which step 1 refuses; a listing of
    // such tables names tables the appliance would query (ducklake_inlined_data_tables.table_name).
    const inlined = db.query<{ n: number }, []>("SELECT count(*) AS n FROM ducklake_inlined_data_tables").get()?.n ?? 0;
    if (inlined > 0)
      throw refuse(
        source,
        `ducklake_inlined_data_tables lists ${inlined} table(s) of inlined rows (svc never inlines rows: data_inlining_row_limit 0)`,
      );
    checkNames(db, source);
    checkPaths(db, source, resolve(dataPath));
  } finally {
    db.close();
  }
}
