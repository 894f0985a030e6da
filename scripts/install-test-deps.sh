#!/usr/bin/env bash
# Installs what the test suite runs for real: Emacs (Org mode parses tools.org),
# org-roam (reads the nodes the roam tools write), yaml.el (gptel's YAML
# reader, reads the session files scopegate writes), Prometheus (scrapes
# /metrics), Debian's Python with venv, setuptools and wheel (the coding
# profile's `pip install -e .` into a virtual environment), and the real
# agent and MCP clients of the end-to-end tests (e2e/package.json: Claude
# Code, Codex, the MCP inspector CLI and SDK).
# Idempotent: does nothing when everything is already there.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

# The npm clients, pinned by e2e/package-lock.json, into e2e/node_modules.
install_npm_clients() {
  if ! command -v npm >/dev/null 2>&1; then
    if [ "$(id -u)" -ne 0 ]; then
      echo "install-test-deps: need root to install nodejs and npm" >&2
      exit 1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
  fi
  local stamp="$root/e2e/node_modules/.package-lock.json"
  if [ ! -f "$stamp" ] || [ "$root/e2e/package-lock.json" -nt "$stamp" ]; then
    (cd "$root/e2e" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
    echo "install-test-deps: installed the npm clients of e2e/package.json"
  fi
}
install_npm_clients

# The OpenTelemetry Collector of the export tests: e2e/otelcol, the
# collector's own OTLP receiver (gRPC and HTTP/protobuf) writing what it
# receives as OTLP JSON, built from its Go modules through the module proxy
# into $SCOPEGATE_OTELCOL_DIR (default /usr/local/lib/scopegate-test/otelcol).
# Rebuilt only when e2e/otelcol changed.
install_otelcol() {
  local dir=${SCOPEGATE_OTELCOL_DIR:-/usr/local/lib/scopegate-test/otelcol}
  local sum
  sum=$(cat "$root/e2e/otelcol/go.mod" "$root/e2e/otelcol/go.sum" "$root/e2e/otelcol/main.go" | sha256sum | cut -d' ' -f1)
  if [ -x "$dir/otelcol" ] && [ "$(cat "$dir/otelcol.sum" 2>/dev/null)" = "$sum" ]; then
    return
  fi
  mkdir -p "$dir"
  (cd "$root/e2e/otelcol" && CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$dir/otelcol.new" .)
  mv "$dir/otelcol.new" "$dir/otelcol"
  echo "$sum" >"$dir/otelcol.sum"
  echo "install-test-deps: built the OpenTelemetry Collector into $dir"
}
install_otelcol

need=()
command -v emacs >/dev/null 2>&1 || need+=(emacs-nox)
[ -d /usr/share/emacs/site-lisp/elpa-src ] && ls /usr/share/emacs/site-lisp/elpa-src | grep -q '^org-roam-' || need+=(elpa-org-roam elpa-emacsql-sqlite3)
[ -d /usr/share/emacs/site-lisp/elpa-src ] && ls /usr/share/emacs/site-lisp/elpa-src | grep -q '^yaml-' || need+=(elpa-yaml)
command -v prometheus >/dev/null 2>&1 || need+=(prometheus)
command -v promtool >/dev/null 2>&1 || need+=(prometheus)
command -v rg >/dev/null 2>&1 || need+=(ripgrep)
# The network tests: curl through the proxies, dig asking the DNS stub,
# git clone over HTTP, jq in the examples.
command -v curl >/dev/null 2>&1 || need+=(curl)
command -v dig >/dev/null 2>&1 || need+=(bind9-dnsutils)
command -v git >/dev/null 2>&1 || need+=(git)
command -v jq >/dev/null 2>&1 || need+=(jq)
# The live page's tests drive it in a headless Chromium (chromedp speaks to
# it directly: no driver).
command -v chromium >/dev/null 2>&1 || need+=(chromium)
# ensurepip is python3-venv's; wheel gives setuptools its bdist_wheel
# (pip install --no-build-isolation -e . with setuptools < 70.1).
/usr/bin/python3 -c 'import ensurepip, setuptools, wheel' >/dev/null 2>&1 || need+=(python3-venv python3-setuptools python3-wheel)

if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "install-test-deps: need root to install: ${need[*]} (or install them yourself)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
before=$(pgrep -x prometheus || true)
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
# The Debian prometheus package may start a service; the tests run their
# own. Stop only what this install started, by pid: a Prometheus that ran
# before is left alone.
if command -v systemctl >/dev/null 2>&1 && [ -z "$before" ]; then systemctl disable --now prometheus >/dev/null 2>&1 || true; fi
for pid in $(pgrep -x prometheus || true); do
  case " $(echo $before) " in *" $pid "*) ;; *) kill "$pid" 2>/dev/null || true ;; esac
done
echo "install-test-deps: installed ${need[*]}"
