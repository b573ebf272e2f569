/**
 * Is a SQLite file shaped exactly like a catalog of ours (docs/OPERATIONS.md "Restore")? A backup
 * handed to `svc catalog restore` is not trusted: a trigger in it would run inside the appliance's
 * next commit (one `DELETE FROM ducklake_data_file` empties the lake, and the start after that
 * deletes every file as an orphan), a view in place of a catalog table answers whatever it likes,
 * an extra table or index is not ours to keep. Its objects are compared with those the DuckLake
 * DDL and our own additions create (ddl.ts), object by object and by SQLite's stored definition
 * text, reading `sqlite_master` only: nothing of the file is run before it passes.
 */
import { Database } from "bun:sqlite";
import { DUCKLAKE_TABLES_DDL, REQUIRED_TABLES, SVC_DDL } from "./ddl.ts";

interface SchemaObject {
  type: string;
  name: string;
  tbl_name: string;
  sql: string | null;
}

const OBJECTS_SQL = "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name";

let reference: Map<string, SchemaObject> | undefined;

/** The objects our DDL creates, as SQLite stores them (made in memory once: SQLite's own normalisation). */
function referenceObjects(): Map<string, SchemaObject> {
  if (reference === undefined) {
    const db = new Database(":memory:");
    try {
      for (const ddl of [...DUCKLAKE_TABLES_DDL, ...SVC_DDL]) db.run(ddl);
      reference = new Map(
        db
          .query<SchemaObject, []>(OBJECTS_SQL)
          .all()
          .map((o) => [o.name, o]),
      );
    } finally {
      db.close();
    }
  }
  return reference;
}

/** Column list of a plain table of `db` (PRAGMA table_xinfo reads the schema only). */
function columnsOf(db: Database, table: string): string[] {
  return db
    .query<{ name: string; type: string; hidden: number }, []>(`PRAGMA table_xinfo("${table.replaceAll('"', '""')}")`)
    .all()
    .map((c) => `${c.name} ${c.type}${c.hidden ? " (hidden)" : ""}`);
}

/** What differs between a table's definition and ours, for the message. */
function tableDifference(db: Database, ref: Database, name: string): string {
  const got = columnsOf(db, name);
  const want = columnsOf(ref, name);
  for (let i = 0; i < Math.max(got.length, want.length); i++) {
    if (got[i] !== want[i]) {
      if (want[i] === undefined) return `extra column ${JSON.stringify(got[i])}`;
      if (got[i] === undefined) return `column ${JSON.stringify(want[i])} missing`;
      return `column ${i + 1} is ${JSON.stringify(got[i])}, DuckLake's is ${JSON.stringify(want[i])}`;
    }
  }
  return "same columns but other constraints, defaults or collations";
}

const quoted = (s: string) => JSON.stringify(s);

/**
 * The problems of `db`'s schema against ours, the most dangerous first (triggers, views, unknown
 * objects, then definitions that differ, then missing tables); empty when it matches. DuckLake
 * tables and our svc_ objects may be absent (an older catalog), except REQUIRED_TABLES.
 */
export function catalogSchemaProblems(db: Database): string[] {
  const ref = referenceObjects();
  const objects = db.query<SchemaObject, []>(OBJECTS_SQL).all();
  const problems: Array<[number, string]> = [];
  const present = new Set<string>();
  let refDb: Database | undefined;
  try {
    for (const o of objects) {
      const mine = ref.get(o.name);
      if (o.type === "trigger") {
        problems.push([
          0,
          `it holds trigger ${quoted(o.name)} on ${quoted(o.tbl_name)} (a catalog has none; it would run inside the appliance's commits)`,
        ]);
      } else if (o.type === "view") {
        problems.push([1, `${quoted(o.name)} is a view${mine ? ", not DuckLake's table" : ""} (a catalog has none)`]);
      } else if (mine === undefined) {
        problems.push([2, `it holds ${o.type} ${quoted(o.name)}, which is neither DuckLake's nor svc's`]);
      } else if (o.type !== mine.type || o.tbl_name !== mine.tbl_name || o.sql !== mine.sql) {
        if (o.type !== "table" || /^\s*CREATE\s+VIRTUAL\b/i.test(o.sql ?? "")) {
          problems.push([3, `${o.type} ${quoted(o.name)} is not the ${mine.type} DuckLake and svc define`]);
        } else {
          if (refDb === undefined) {
            refDb = new Database(":memory:");
            for (const ddl of [...DUCKLAKE_TABLES_DDL, ...SVC_DDL]) refDb.run(ddl);
          }
          problems.push([
            3,
            `table ${quoted(o.name)} is not defined as DuckLake 1.0 defines it: ${tableDifference(db, refDb, o.name)}`,
          ]);
        }
      } else if (o.type === "table") present.add(o.name);
    }
  } finally {
    refDb?.close();
  }
  const missing = REQUIRED_TABLES.filter((t) => !present.has(t) && !objects.some((o) => o.name === t));
  if (missing.length > 0) problems.push([4, `it lacks DuckLake tables: ${missing.join(", ")}`]);
  return problems.sort((a, b) => a[0] - b[0]).map((p) => p[1]);
}
