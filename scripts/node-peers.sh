#!/usr/bin/env bash
# Installs the npm test peers that the product does not depend on into a directory of their own
# and prints the path of azurite-blob on stdout (everything else goes to stderr). Azurite is the
# Azure Blob emulator of the object-store tests (test/peers/azurite.ts, docs/STORAGE.md "Test peers");
# its ~285 packages (360 MB) stay out of the product's package-lock.json and out of every `npm ci`.
# The versions are pinned by scripts/node-peers/package-lock.json (`npm ci`, no install scripts).
# Idempotent: when that lock is already installed it only checks and prints the path.
#
#   SVC_NODE_PEERS   install directory (default: $HOME/.cache/svc/node-peers)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/node-peers"
dir="${SVC_NODE_PEERS:-$HOME/.cache/svc/node-peers}"
bin="$dir/node_modules/.bin/azurite-blob"

installed() {
  [ -x "$bin" ] && cmp -s "$here/package-lock.json" "$dir/package-lock.json" && cmp -s "$here/package.json" "$dir/package.json"
}

if ! installed; then
  command -v npm >/dev/null || { echo "node-peers: npm is not installed" >&2; exit 1; }
  echo "node-peers: installing $(node -p 'Object.entries(require(process.argv[1]).dependencies).map(([n, v]) => n + "@" + v).join(" ")' "$here/package.json") into $dir" >&2
  mkdir -p "$dir"
  cp "$here/package.json" "$here/package-lock.json" "$dir/"
  (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) >&2
  installed || { echo "node-peers: npm ci finished but $bin is missing" >&2; exit 1; }
fi

echo "$bin"
