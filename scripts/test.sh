#!/usr/bin/env bash
# Runs every check and test of scopegate, as CI does: formatting, vet,
# staticcheck, the race-enabled test suite (real Emacs, org-roam, Prometheus,
# Landlock), and the policy corpora through the built CLI.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-test-deps.sh

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

echo "== go vet"
go vet ./...

echo "== staticcheck"
go tool staticcheck ./...

echo "== vet and staticcheck of the per-call build (-tags lean)"
go vet -tags lean ./cmd/scopegate
go tool staticcheck -tags lean ./cmd/scopegate

echo "== go test -race"
go test -race -count=1 -timeout 40m ./...

echo "== policy corpora through the CLI"
go build -o ./scopegate ./cmd/scopegate
runner=../shared/tools/corpus_run.py
if [ -f "$runner" ] && python3 -c 'import yaml' 2>/dev/null; then
  for corpus in ../shared/corpus/*.yaml policy/testdata/corpus/*.yaml; do
    [ -f "$corpus" ] || continue
    echo "-- $corpus"
    python3 "$runner" --bin ./scopegate --corpus "$corpus" --max-fp-pct 0
  done
elif [ "${CI:-}" = "true" ]; then
  echo "corpus runner or python3 yaml missing" >&2; exit 1
else
  echo "(skipped: $runner or python3 yaml not available; the Go corpus test ran above)"
fi
echo "all checks passed"
