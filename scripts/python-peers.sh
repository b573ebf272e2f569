#!/usr/bin/env bash
# Installs the Python test peers for the DuckLake interoperability tests into a venv and prints the
# venv's python path on stdout (everything else goes to stderr). A stock DuckDB with the ducklake and
# sqlite extensions is the reference reader/writer of the DuckLake catalog format (docs/DUCKLAKE.md);
# openapi-spec-validator judges the published OpenAPI document (test/integration/openapi-valid.test.ts);
# schemathesis fuzzes the API against it (test/integration/schemathesis.test.ts); moto's S3 server is
# the S3-compatible store of the object-store tests (test/peers/moto.ts, docs/STORAGE.md "Test peers").
# Idempotent: when the pinned versions are already installed it only checks and prints the path.
#
#   SVC_PY_PEERS   venv directory (default: $HOME/.cache/svc/py-peers)
#   PYTHON         interpreter used to create the venv (default: python3)
set -euo pipefail

VENV="${SVC_PY_PEERS:-$HOME/.cache/svc/py-peers}"
PY_BOOT="${PYTHON:-python3}"
# The extension wheels must match the DuckDB version exactly: DuckDB refuses extensions built for
# another version.
DUCKDB_VERSION="1.5.5"
OPENAPI_VALIDATOR_VERSION="0.9.0"
SCHEMATHESIS_VERSION="4.32.5"
MOTO_VERSION="5.2.5"
PACKAGES=(
  "duckdb==${DUCKDB_VERSION}"
  "duckdb-extension-ducklake==${DUCKDB_VERSION}"
  "duckdb-extension-sqlite==${DUCKDB_VERSION}"
  # A DuckLake catalog in PostgreSQL (test/integration/ducklake-pg-interop.test.ts).
  "duckdb-extension-postgres==${DUCKDB_VERSION}"
  # A stock DuckDB reading a lake on S3 (test/integration/lake-object-store.test.ts).
  "duckdb-extension-httpfs==${DUCKDB_VERSION}"
  "openapi-spec-validator==${OPENAPI_VALIDATOR_VERSION}"
  "schemathesis==${SCHEMATHESIS_VERSION}"
  "moto[server]==${MOTO_VERSION}"
)

py="$VENV/bin/python"

installed() {
  [ -x "$py" ] || return 1
  "$py" - "$DUCKDB_VERSION" "$OPENAPI_VALIDATOR_VERSION" "$SCHEMATHESIS_VERSION" "$MOTO_VERSION" <<'PY' >/dev/null 2>&1
import sys
from importlib.metadata import version
want = sys.argv[1]
for name in ("duckdb", "duckdb-extension-ducklake", "duckdb-extension-sqlite", "duckdb-extension-postgres", "duckdb-extension-httpfs"):
    if version(name) != want:
        sys.exit(1)
if version("openapi-spec-validator") != sys.argv[2]:
    sys.exit(1)
if version("schemathesis") != sys.argv[3]:
    sys.exit(1)
if version("moto") != sys.argv[4]:
    sys.exit(1)
import duckdb, duckdb_extension_ducklake, duckdb_extension_sqlite, duckdb_extension_postgres, duckdb_extension_httpfs, openapi_spec_validator, schemathesis  # noqa: F401
import boto3, flask, moto.server  # noqa: F401
PY
}

if ! installed; then
  if [ ! -x "$py" ]; then
    echo "python-peers: creating venv $VENV" >&2
    mkdir -p "$(dirname "$VENV")"
    "$PY_BOOT" -m venv "$VENV" >&2
  fi
  echo "python-peers: installing ${PACKAGES[*]}" >&2
  "$py" -m pip install --quiet --disable-pip-version-check "${PACKAGES[@]}" >&2
  installed || { echo "python-peers: install finished but the packages do not import" >&2; exit 1; }
fi

echo "$py"
