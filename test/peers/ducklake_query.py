"""Reference DuckLake peer: a stock DuckDB 1.5.5 with the ducklake and sqlite extensions (loaded
offline, see duckpeer.py) attaches a catalog read-only as `l` and runs one query.

  ducklake_query.py <catalog> <data_path> <sql>
      [{"<column>": value, ...}, ...] on stdout (values JSON, others as text)
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import duckpeer  # noqa: E402


def main(argv):
    if len(argv) != 4:
        sys.stderr.write(__doc__)
        return 2
    con = duckpeer.connect()
    con.execute("SET TimeZone = 'UTC'")
    duckpeer.attach(con, argv[1], argv[2], read_only=True)
    cur = con.execute(argv[3])
    names = [d[0] for d in cur.description]
    print(json.dumps([dict(zip(names, row)) for row in cur.fetchall()], default=str))
    con.execute("DETACH l")
    con.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
