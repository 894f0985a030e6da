#!/usr/bin/env bash
# Installs what the test suite runs for real: Emacs (Org mode parses tools.org),
# org-roam (reads the nodes the roam tools write) and Prometheus (scrapes
# /metrics). Idempotent: does nothing when everything is already there.
set -euo pipefail

need=()
command -v emacs >/dev/null 2>&1 || need+=(emacs-nox)
[ -d /usr/share/emacs/site-lisp/elpa-src ] && ls /usr/share/emacs/site-lisp/elpa-src | grep -q '^org-roam-' || need+=(elpa-org-roam elpa-emacsql-sqlite3)
command -v prometheus >/dev/null 2>&1 || need+=(prometheus)
command -v promtool >/dev/null 2>&1 || need+=(prometheus)

if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "install-test-deps: need root to install: ${need[*]} (or install them yourself)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
# The Debian prometheus package starts a system service; the tests run their own.
if command -v systemctl >/dev/null 2>&1; then systemctl disable --now prometheus >/dev/null 2>&1 || true; fi
pkill -x prometheus >/dev/null 2>&1 || true
echo "install-test-deps: installed ${need[*]}"
