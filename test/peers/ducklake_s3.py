"""Stock DuckDB 1.5.5 with the ducklake, sqlite and httpfs extensions (PyPI wheels, loaded offline
as duckpeer does) reading a lake whose Parquet files are on S3 (test/integration/lake-object-store.test.ts).
The catalog's own data_path (ducklake_metadata, an s3:// URL) says where the files are: no DATA_PATH
is given. Prints JSON on stdout.

  ducklake_s3.py count <catalog> <schema.table> <endpoint> <key id> <secret>   {"count": n, "distinct": d, "data_path": "..."}
"""
import glob
import json
import os
import sys
from urllib.parse import urlparse

import duckdb_extension_httpfs

import duckpeer


def main():
    _, cmd, catalog, table, endpoint, key_id, secret = sys.argv
    assert cmd == "count"
    con = duckpeer.connect()
    base = os.path.join(os.path.dirname(duckdb_extension_httpfs.__file__), "extensions")
    con.execute(f"LOAD '{glob.glob(os.path.join(base, '*', 'httpfs.duckdb_extension'))[0]}'")
    u = urlparse(endpoint)
    con.execute(
        "CREATE SECRET s3 (TYPE s3, KEY_ID ?, SECRET ?, REGION 'us-east-1', ENDPOINT ?, URL_STYLE 'path', USE_SSL ?)",
        [key_id, secret, u.netloc, u.scheme == "https"],
    )
    con.execute(f"ATTACH 'ducklake:sqlite:{catalog}' AS l (READ_ONLY)")
    n, d = con.execute(f"SELECT count(*), count(DISTINCT k) FROM l.{table}").fetchone()
    print(json.dumps({"count": n, "distinct": d}))


main()
