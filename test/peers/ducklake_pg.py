"""Stock DuckDB 1.5.5 with the ducklake and postgres extensions over a DuckLake catalog in PostgreSQL
(test/integration/ducklake-pg-interop.test.ts). Prints JSON on stdout.

  ducklake_pg.py read   <libpq> <data_path> <schema.table>          rows (ordered by every column)
  ducklake_pg.py insert <libpq> <data_path> <schema.table> <from> <to> [<files>]
        creates the table (id BIGINT, name VARCHAR) when missing and inserts ids from..to-1 as Parquet
        files (<files> INSERT statements, one file each; data inlining off)
  ducklake_pg.py attach <libpq> <data_path>                          creates the catalog when empty
  ducklake_pg.py counts <libpq> <data_path>
        every table: rows (count(*)), distinct whole rows and distinct session_id (when it has one),
        each read from the Parquet files (a distinct count cannot be answered from file statistics)
  ducklake_pg.py insert-loop <libpq> <data_path> <schema.table> <rows> <stop_file>
        creates the table and inserts <rows> rows per INSERT (one snapshot each) until <stop_file>
        exists; a failed INSERT is counted and not retried (its rows are not counted as inserted)

The postgres extension wheel (duckdb-extension-postgres) ships postgres.duckdb_extension whose entry
point is postgres_scanner_duckdb_cpp_init, so it is linked as postgres_scanner in the extension
directory duckpeer lays out (same reason as sqlite there).
"""
import glob
import json
import os
import sys

import duckdb
import duckdb_extension_postgres

import duckpeer


def connect():
    root = duckpeer.extension_directory()
    platform = duckdb.connect().execute("PRAGMA platform").fetchone()[0]
    link = os.path.join(root, "v" + duckdb.__version__, platform, "postgres_scanner.duckdb_extension")
    base = os.path.join(os.path.dirname(duckdb_extension_postgres.__file__), "extensions")
    src = glob.glob(os.path.join(base, "*", "postgres.duckdb_extension"))[0]
    if os.path.realpath(link) != os.path.realpath(src):
        tmp = f"{link}.{os.getpid()}"
        os.symlink(src, tmp)
        os.replace(tmp, link)
    con = duckdb.connect(
        config={"autoinstall_known_extensions": False, "autoload_known_extensions": False, "extension_directory": root}
    )
    con.execute("LOAD postgres_scanner")
    con.execute("LOAD ducklake")
    return con


def attach(con, libpq, data_path):
    libpq = libpq.replace("'", "''")
    # Rows go to Parquet files, never into catalog tables: svc lists files only (docs/DUCKLAKE.md).
    con.execute(f"ATTACH 'ducklake:postgres:{libpq}' AS l (DATA_PATH '{data_path}', DATA_INLINING_ROW_LIMIT 0)")


def main():
    cmd, libpq, data_path = sys.argv[1:4]
    con = connect()
    attach(con, libpq, data_path)
    if cmd == "attach":
        out = {"snapshot": con.execute("SELECT max(snapshot_id) FROM l.snapshots()").fetchone()[0]}
    elif cmd == "read":
        table = sys.argv[4]
        cur = con.execute(f"SELECT * FROM l.{table} ORDER BY ALL")
        names = [d[0] for d in cur.description]
        rows = [dict(zip(names, [v if isinstance(v, (int, float, str, bool)) or v is None else str(v) for v in r])) for r in cur.fetchall()]
        out = {"count": len(rows), "rows": rows}
    elif cmd == "insert":
        table, lo, hi = sys.argv[4], int(sys.argv[5]), int(sys.argv[6])
        files = int(sys.argv[7]) if len(sys.argv) > 7 else 1
        con.execute(f"CREATE TABLE IF NOT EXISTS l.{table} (id BIGINT, name VARCHAR)")
        step = max(1, -(-(hi - lo) // files))
        for start in range(lo, hi, step):
            end = min(hi, start + step)
            con.execute(f"INSERT INTO l.{table} SELECT i, 'ext-' || i FROM range({start}, {end}) t(i)")
        out = {"snapshot": con.execute("SELECT max(snapshot_id) FROM l.snapshots()").fetchone()[0]}
    elif cmd == "counts":
        out = {}
        tables = con.execute(
            "SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = 'l' ORDER BY ALL"
        ).fetchall()
        for schema, name in tables:
            q = f'l."{schema}"."{name}"'
            cols = [r[0] for r in con.execute(f"DESCRIBE {q}").fetchall()]
            sid = "count(DISTINCT session_id)" if "session_id" in cols else "NULL"
            n, d, s = con.execute(f"SELECT count(*), count(DISTINCT t), {sid} FROM {q} t").fetchone()
            out[f"{schema}.{name}"] = {"rows": n, "distinct_rows": d, "distinct_session_ids": s}
    elif cmd == "insert-loop":
        table, per, stop_file = sys.argv[4], int(sys.argv[5]), sys.argv[6]
        con.execute(f"CREATE TABLE IF NOT EXISTS l.{table} (id BIGINT, name VARCHAR)")
        inserted, failed, errors, nxt = 0, 0, [], 0
        while not os.path.exists(stop_file):
            try:
                con.execute(f"INSERT INTO l.{table} SELECT i, 'ext-' || i FROM range({nxt}, {nxt + per}) t(i)")
                inserted += per
            except Exception as e:  # a lost race: counted, its ids skipped
                failed += 1
                if len(errors) < 5:
                    errors.append(str(e)[:300])
            nxt += per
        out = {"inserted": inserted, "failed": failed, "errors": errors}
    else:
        raise SystemExit(f"unknown command {cmd}")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
