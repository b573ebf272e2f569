"""Reference DuckLake peer for test/integration/ducklake-interop.test.ts.

A stock DuckDB 1.5.5 with the ducklake and sqlite extensions (loaded offline, see duckpeer.py)
attaches a catalog as `l` and either reads a table or runs SQL. Output: one JSON document on stdout.

  ducklake_read.py read <catalog> <data_path> <schema.table> <order by> [version ...]
      {"snapshots": [[id, changes], ...], "current": id, "tables": ["s.t", ...],
       "columns": [[name, type], ...], "count": n, "rows": [{...}, ...],
       "at": {"<version>": {"count": n, "rows": [...], "columns": [...]}}}
  ducklake_read.py exec <catalog> <data_path> <sql> [<sql> ...]
      runs each statement in order: {"ok": true}
"""
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import duckpeer  # noqa: E402


def plain_json(value):
    # DuckDB's to_json writes NaN/Infinity tokens that strict JSON readers refuse: pass them as text.
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return str(value)
    if isinstance(value, dict):
        return {k: plain_json(v) for k, v in value.items()}
    return value


def rows_json(con, sql):
    # to_json keeps timestamps as text and avoids Python datetime conversion (no pytz needed).
    return [plain_json(json.loads(r[0])) for r in con.execute(f"SELECT to_json(x)::VARCHAR FROM ({sql}) x").fetchall()]


def columns(con, relation):
    return [[r[0], r[1]] for r in con.execute(f"DESCRIBE {relation}").fetchall()]


def read(con, fqn, order_by, versions):
    out = {
        "snapshots": [[r[0], r[1]] for r in con.execute("SELECT snapshot_id, changes::VARCHAR FROM l.snapshots() ORDER BY snapshot_id").fetchall()],
        "current": con.execute("SELECT id FROM l.current_snapshot()").fetchone()[0],
        "tables": [f"{r[0]}.{r[1]}" for r in con.execute(
            "SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = 'l' ORDER BY 1, 2").fetchall()],
        "columns": columns(con, f"l.{fqn}"),
        "count": con.execute(f"SELECT count(*) FROM l.{fqn}").fetchone()[0],
        "rows": rows_json(con, f"SELECT * FROM l.{fqn} ORDER BY {order_by}"),
        "at": {},
    }
    for v in versions:
        rel = f"l.{fqn} AT (VERSION => {int(v)})"
        out["at"][v] = {
            "count": con.execute(f"SELECT count(*) FROM {rel}").fetchone()[0],
            "rows": rows_json(con, f"SELECT * FROM {rel} ORDER BY {order_by}"),
            "columns": columns(con, f"(SELECT * FROM {rel})"),
        }
    return out


def main(argv):
    if len(argv) < 4:
        sys.stderr.write(__doc__)
        return 2
    cmd, catalog, data_path = argv[1], argv[2], argv[3]
    con = duckpeer.connect()
    con.execute("SET TimeZone = 'UTC'")
    duckpeer.attach(con, catalog, data_path)
    if cmd == "read":
        print(json.dumps(read(con, argv[4], argv[5], argv[6:])))
    elif cmd == "exec":
        for sql in argv[4:]:
            con.execute(sql)
        print(json.dumps({"ok": True}))
    else:
        sys.stderr.write(f"unknown command {cmd}\n")
        return 2
    con.execute("DETACH l")
    con.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
