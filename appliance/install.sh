#!/usr/bin/env bash
# Install svc on a capture box (docs/INSTALL.md). Idempotent: run it again to upgrade the binary
# and the unit; /etc/svc/svc.json is written only when absent, data is never touched.
#
#   sudo appliance/install.sh [--binary dist/svc] [--no-start]
#
# DESTDIR=/some/dir stages the files under that directory instead (packaging, tests): no user is
# created, nothing is chowned, sysctl and systemctl are not called.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
binary="$repo/dist/svc"
start=1

usage() {
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"
}

while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary="${2:?--binary needs a path}"; shift 2 ;;
    --binary=*) binary="${1#--binary=}"; shift ;;
    --no-start) start=0; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "install.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done

dest="${DESTDIR:-}"
staged=0
[ -n "$dest" ] && staged=1

if [ "$staged" = 0 ] && [ "$(id -u)" != 0 ]; then
  echo "install.sh: run as root (sudo), or set DESTDIR to stage the files" >&2
  exit 1
fi
if [ ! -x "$binary" ]; then
  echo "install.sh: $binary not found or not executable; run \`make build\` first" >&2
  exit 1
fi

say() { printf 'install.sh: %s\n' "$*"; }

# 1. Dedicated system user: no login shell, home is the state directory.
if [ "$staged" = 0 ]; then
  if ! getent group svc >/dev/null; then groupadd --system svc; say "created group svc"; fi
  if ! getent passwd svc >/dev/null; then
    useradd --system --gid svc --home-dir /var/lib/svc --no-create-home --shell /usr/sbin/nologin --comment "svc capture appliance" svc
    say "created user svc"
  fi
fi

# 2. Directories: config readable by the service, state and cache owned by it.
dir() { # dir <path> <mode> <owner:group>
  install -d -m "$2" "$dest$1"
  [ "$staged" = 1 ] || chown "$3" "$dest$1"
}
dir /etc/svc 0750 root:svc
dir /var/lib/svc 0750 svc:svc
dir /var/lib/svc/gamedata 0750 svc:svc
dir /var/cache/svc 0750 svc:svc
install -d -m 0755 "$dest/usr/local/bin" "$dest/etc/systemd/system" "$dest/etc/sysctl.d" "$dest/usr/local/share/doc/svc"

# 3. The binary: copy beside, then rename, so a running service keeps its old inode.
install -m 0755 "$binary" "$dest/usr/local/bin/.svc.new"
mv -f "$dest/usr/local/bin/.svc.new" "$dest/usr/local/bin/svc"
say "installed $dest/usr/local/bin/svc"
# The load generator answers to its own name too (docs/LOADGEN.md): a link, relative so DESTDIR works.
ln -sfn svc "$dest/usr/local/bin/loadgen"
say "linked $dest/usr/local/bin/loadgen -> svc"

# 4. Default configuration, only when there is none: an operator's edits survive upgrades.
if [ -e "$dest/etc/svc/svc.json" ]; then
  say "kept existing $dest/etc/svc/svc.json"
else
  install -m 0640 "$here/svc.json" "$dest/etc/svc/svc.json"
  [ "$staged" = 1 ] || chown root:svc "$dest/etc/svc/svc.json"
  say "installed default $dest/etc/svc/svc.json"
fi

# 5. UDP receive buffers: the socket buffer decides loss under bursts (docs/PLATFORM.md "UDP receive buffer").
#    rmem_max caps SO_RCVBUF; the unit's CAP_NET_ADMIN also allows SO_RCVBUFFORCE beyond it.
cat >"$dest/etc/sysctl.d/60-svc.conf" <<'EOF'
# svc: allow 64 MiB UDP receive buffers for the HEP listener (ingest.hep.udp.socket_buffer_bytes).
net.core.rmem_max = 67108864
EOF
if [ "$staged" = 0 ]; then
  if sysctl -q -p /etc/sysctl.d/60-svc.conf 2>/dev/null; then
    say "net.core.rmem_max = $(sysctl -n net.core.rmem_max)"
  else
    say "warning: could not apply /etc/sysctl.d/60-svc.conf now (container?); it applies at boot"
  fi
fi

# 6. Documentation beside the unit's Documentation= link, then the unit itself.
install -m 0644 "$repo/docs/INSTALL.md" "$dest/usr/local/share/doc/svc/INSTALL.md"
install -m 0644 "$repo/systemd/svc.service" "$dest/etc/systemd/system/svc.service"
say "installed $dest/etc/systemd/system/svc.service"

if [ "$staged" = 1 ]; then
  say "staged under $dest; user, ownership, sysctl and systemctl skipped"
  exit 0
fi

# 7. Check the configuration as the service user before (re)starting anything; this also
#    extracts the embedded DuckDB library into /var/cache/svc once.
as_svc() { runuser -u svc -- env SVC_RUNTIME_CACHE_DIR=/var/cache/svc "$@"; }
say "$(as_svc /usr/local/bin/svc version)"
if ! as_svc /usr/local/bin/svc show-config --config-path /etc/svc/svc.json >/dev/null; then
  echo "install.sh: /etc/svc/svc.json is not valid (see above); fix it, then run install.sh again" >&2
  exit 1
fi

if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
  systemctl daemon-reload
  systemctl enable svc.service >/dev/null
  if [ "$start" = 1 ]; then
    systemctl restart svc.service
    say "svc is $(systemctl is-active svc.service)"
  else
    say "enabled, not started (--no-start): systemctl start svc"
  fi
else
  say "warning: systemd is not running here; unit installed but not enabled"
fi

cat <<'EOF'

svc is installed.
  dashboard and API   http://<this-box>:8080/   (user admin)
  admin password      generated on first start and logged once:
                        journalctl -u svc | grep password
  HEP from agents     UDP or TCP <this-box>:9060
  configuration       /etc/svc/svc.json, then: systemctl restart svc
  logs                journalctl -u svc -f
EOF
