"""Named SQL statements against a DuckLake catalog, run by a stock DuckDB with the ducklake and sqlite
extensions (loaded offline by duckpeer.py). Used by test/integration/lake-interop-ingest.test.ts to
compare what the reference reader sees with what our own engine returns.

  ducklake_queries.py <catalog> <data_path> <ro|rw> <json object {"name": "SQL", ...}>

The catalog is attached as `l` (`ATTACH 'ducklake:sqlite:<catalog>' AS l (DATA_PATH ..., READ_ONLY)`
for `ro`). Output, one JSON document on stdout: {"name": [row, ...], ...}, each row an object built
by DuckDB's to_json (so no Python datetime or pytz conversion is involved). Any failing statement
ends the script with exit code 1 and the statement's name and error on stderr.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import duckpeer  # noqa: E402


def main(argv):
    if len(argv) != 5 or argv[3] not in ("ro", "rw"):
        sys.stderr.write(__doc__)
        return 2
    catalog, data_path, mode, queries = argv[1], argv[2], argv[3], json.loads(argv[4])
    con = duckpeer.connect()
    con.execute("SET TimeZone = 'UTC'")
    duckpeer.attach(con, catalog, data_path, read_only=(mode == "ro"))
    out = {}
    for name, sql in queries.items():
        try:
            rows = con.execute(f"SELECT to_json(x)::VARCHAR FROM ({sql}) x").fetchall()
        except Exception as e:  # noqa: BLE001 - reported to the test with the statement's name
            sys.stderr.write(f"{name}: {e}\n")
            return 1
        out[name] = [json.loads(r[0]) for r in rows]
    con.execute("DETACH l")
    con.close()
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
