#!/usr/bin/env bash
# Go micro-benchmarks of the runtime's packages. Writes RESULTS.md beside
# this script with the machine, the load at the time and the raw output.
# Usage: benchmarks/go/run.sh   (from anywhere; about 3 minutes)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=benchmarks/go/RESULTS.md
raw=$(mktemp)
run() { echo "\$ $*" >>"$raw"; "$@" 2>&1 | grep -E '^(Benchmark|ok|FAIL|PASS)' >>"$raw"; echo >>"$raw"; }

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
run env GOMAXPROCS=1 go test -run '^$' -bench 'CoreCounter$' -benchtime 5000000x -count 3 ./operator/
run go test -run '^$' -bench 'CoreCounterSharded' -benchtime 6000000x -count 3 ./operator/
run go test -run '^$' -bench 'Cut1M|Restore1M' -benchtime 3x ./operator/
run go test -run '^$' -bench '1M' -benchtime 3x ./snapshot/
run go test -run '^$' -bench . -benchtime 200000x ./statestore/
run go test -run '^$' -bench . -benchtime 2000x ./arrowio/
run go test -run '^$' -bench 'ServePassThrough|CoreOnlyPass|ServeKafka' -benchtime 2000x ./bridge/
run go test -run '^$' -bench 'HeldDataMemory' -benchtime 3x ./bridge/
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

{
  echo "# Go micro-benchmarks"
  echo
  echo "Produced by \`benchmarks/go/run.sh\` on $(date -u +%Y-%m-%d) — $(nproc) cores,"
  echo "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(go version | cut -d' ' -f3)."
  echo "Load average before: $load_before; after: $load_after (other work on the machine inflates wall times;"
  echo "\`cpu-ns/...\` metrics count this process's CPU time and are steadier)."
  echo
  echo "See benchmarks/README.md for what each benchmark measures and the targets."
  echo
  echo '```'
  cat "$raw"
  echo '```'
} >"$out"
rm -f "$raw"
echo "wrote $out"
