#!/usr/bin/env bash
# Prints the main performance figures (docs/performance.md) side by side, in one run:
# CLI start-up and per-call cost against their baselines (pairs alternated,
# medians), a program in the private view against Landlock alone
# (alternated rounds, medians), the decision benchmarks, and serve's check
# throughput against a bare net/http echo server (rounds interleaved,
# medians).
# Usage: bash scripts/bench.sh [rounds]   (default 31; the serve rounds are 3)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-31}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== build (the documented release build: CGO_ENABLED=0 -trimpath -ldflags='-s -w';"
echo "   scopegate is the per-call build, -tags lean; scopegate-full beside it has every command)"
CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -tags lean -o "$work/scopegate" ./cmd/scopegate
CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$work/scopegate-full" ./cmd/scopegate
go build -o "$work/loadgen" ./cmd/loadgen
mkdir -p "$work/hello"
printf 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello") }\n' >"$work/hello/main.go"
printf 'module hello\n\ngo 1.26\n' >"$work/hello/go.mod"
(cd "$work/hello" && go build -trimpath -ldflags='-s -w' -o "$work/hello-bin" .)
ls -l "$work/scopegate" "$work/scopegate-full" "$work/hello-bin" | awk '{printf "%s: %.1f MB\n", $NF, $5/1e6}'

echo
echo "== CLI processes ($rounds rounds per pair)"
"$work/loadgen" -mode cli -scopegate "$work/scopegate" -hello "$work/hello-bin" -rounds "$rounds"
echo "-- the same with scopegate-full, the one binary with every command"
"$work/loadgen" -mode cli -scopegate "$work/scopegate-full" -hello "$work/hello-bin" -rounds "$rounds" | tail -n +3

echo
echo "== a program in the private view against Landlock alone (/bin/true, 100 runs each, 7 alternated rounds)"
go test -c -o "$work/exec.test" ./exec
for i in 1 2 3 4 5 6 7; do
  for sub in '^landlock$' '^namespaces\+landlock$'; do
    (cd exec && "$work/exec.test" -test.run '^$' -test.bench "BenchmarkShell/program_true/$sub" -test.benchtime 100x) | grep -E '^Benchmark'
  done
done | tee "$work/view.txt" | awk '{printf "%s %.1f ms\n", $1, $3 / 1e6}'
awk '
  $1 ~ /namespaces/ { v[++nv] = $3 / 1e6; next }
  $1 ~ /landlock/   { l[++nl] = $3 / 1e6 }
  function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }; return a[int((n + 1) / 2)] }
  END { for (i = 1; i <= nv; i++) d[i] = v[i] - l[i]; printf "median: Landlock alone %.1f ms, view %.1f ms, paired difference %+.1f ms\n", med(l, nl), med(v, nv), med(d, nv) }
' "$work/view.txt"

echo
echo "== decisions (go test ./policy -bench BenchmarkDecide)"
go test ./policy -run '^$' -bench 'BenchmarkDecide' -benchtime 1s -count 1 | grep -E '^Benchmark' |
  awk '{printf "| %s | %s %s | %s %s |\n", $1, $3, $4, $7, $8}'

echo
echo "== serve: check throughput against the echo baseline, 64 clients (3 interleaved rounds)"
for i in 1 2 3; do
  "$work/loadgen" -scopegate "$work/scopegate" -mode echo-baseline -c 64 -d 4s | tail -1
  "$work/loadgen" -scopegate "$work/scopegate" -mode check -c 64 -d 4s | tail -1
done | tee "$work/serve.txt"
awk -F'|' '
  $2 ~ /echo-baseline/ { e[++ne] = $5 + 0 }
  $2 ~ / check /       { c[++nc] = $5 + 0 }
  function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }; return a[int((n + 1) / 2)] }
  END { me = med(e, ne); mc = med(c, nc); printf "median req/s: echo %d, check %d, ratio %.2f\n", me, mc, mc / me }
' "$work/serve.txt"
