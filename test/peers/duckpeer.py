"""Offline loading of the DuckDB ducklake and sqlite extensions shipped as PyPI wheels.

The wheels (duckdb-extension-ducklake, duckdb-extension-sqlite) put the extension binaries at
<package>/extensions/v<version>/<name>.duckdb_extension. The sqlite one is named `sqlite` on disk
but its entry point is `sqlite_scanner_duckdb_cpp_init`, and DuckDB derives the entry point from the
file name, so a plain `LOAD '<path>'` fails. We lay out an extension directory the way DuckDB
expects (<dir>/v<version>/<platform>/<name>.duckdb_extension, symlinks to the wheel files) and load
by name with auto-install and auto-load switched off, so nothing is ever downloaded.
"""
import glob
import os
import tempfile

import duckdb
import duckdb_extension_ducklake
import duckdb_extension_sqlite


def _wheel_extension(module, name):
    base = os.path.join(os.path.dirname(module.__file__), "extensions")
    found = glob.glob(os.path.join(base, "*", name + ".duckdb_extension"))
    if not found:
        raise RuntimeError(f"no {name}.duckdb_extension under {base}")
    return found[0]


def extension_directory():
    version = "v" + duckdb.__version__
    platform = duckdb.connect().execute("PRAGMA platform").fetchone()[0]
    root = os.path.join(tempfile.gettempdir(), f"svc-duckdb-ext-{os.getuid()}")
    target = os.path.join(root, version, platform)
    os.makedirs(target, exist_ok=True)
    for module, wheel_name, load_name in (
        (duckdb_extension_sqlite, "sqlite", "sqlite_scanner"),
        (duckdb_extension_ducklake, "ducklake", "ducklake"),
    ):
        link = os.path.join(target, load_name + ".duckdb_extension")
        src = _wheel_extension(module, wheel_name)
        if os.path.realpath(link) != os.path.realpath(src):
            tmp = f"{link}.{os.getpid()}"
            os.symlink(src, tmp)
            os.replace(tmp, link)
    return root


def connect():
    con = duckdb.connect(
        config={
            "autoinstall_known_extensions": False,
            "autoload_known_extensions": False,
            "extension_directory": extension_directory(),
        }
    )
    con.execute("LOAD sqlite")
    con.execute("LOAD ducklake")
    return con


def attach(con, catalog, data_path, alias="l", read_only=False):
    opts = f"DATA_PATH '{data_path}'" + (", READ_ONLY" if read_only else "")
    con.execute(f"ATTACH 'ducklake:sqlite:{catalog}' AS {alias} ({opts})")
