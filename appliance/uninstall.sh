#!/usr/bin/env bash
# Remove svc from a capture box. Keeps /etc/svc (configuration) and /var/lib/svc (settings and the
# lake) unless --purge is given, which also removes them, the cache and the svc user.
#
#   sudo appliance/uninstall.sh [--purge]
#
# DESTDIR=/some/dir removes a staged install (see install.sh) without calling systemctl or userdel.
set -euo pipefail

purge=0
while [ $# -gt 0 ]; do
  case "$1" in
    --purge) purge=1; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "uninstall.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

dest="${DESTDIR:-}"
staged=0
[ -n "$dest" ] && staged=1
if [ "$staged" = 0 ] && [ "$(id -u)" != 0 ]; then
  echo "uninstall.sh: run as root (sudo), or set DESTDIR" >&2
  exit 1
fi
say() { printf 'uninstall.sh: %s\n' "$*"; }

if [ "$staged" = 0 ] && command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
  # stop waits for the drain and lake flush (TimeoutStopSec in the unit).
  systemctl disable --now svc.service 2>/dev/null || true
fi
rm -f "$dest/etc/systemd/system/svc.service" "$dest/usr/local/bin/svc" "$dest/etc/sysctl.d/60-svc.conf"
rm -rf "$dest/usr/local/share/doc/svc"
if [ "$staged" = 0 ] && command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
  systemctl daemon-reload
fi
say "removed the unit, the binary and the sysctl drop-in (net.core.rmem_max stays until reboot)"

if [ "$purge" = 1 ]; then
  rm -rf "$dest/etc/svc" "$dest/var/lib/svc" "$dest/var/cache/svc"
  if [ "$staged" = 0 ] && getent passwd svc >/dev/null; then userdel svc; fi
  if [ "$staged" = 0 ] && getent group svc >/dev/null; then groupdel svc; fi
  say "purged /etc/svc, /var/lib/svc, /var/cache/svc and the svc user"
else
  say "kept /etc/svc and /var/lib/svc (use --purge to remove them and the svc user)"
fi
