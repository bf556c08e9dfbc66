#!/usr/bin/env bash
# Kafka action-state store benchmark (benchmarks/kafka/README.md): the
# order-scoring agent through the bridge server (bridge.BenchmarkServeKafka)
# without a store, with the Kafka store (group commit) and with one flush
# per record, on a real broker. Writes RESULTS.md beside this script with the
# machine, the load and the raw output.
# Usage: benchmarks/kafka/run.sh   (from anywhere; about 3 minutes)
#   FLINKGO_KAFKA=host:port  use that broker instead of starting one
#   BENCH_COUNT=3 BENCH_BATCHES=200 BENCH_SLOW_BATCHES=20
#     runs per mode, and 1024-row batches per run (the flush-per-record mode,
#     about 5k actions/s, runs BENCH_SLOW_BATCHES)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=benchmarks/kafka/RESULTS.md
count=${BENCH_COUNT:-3}
batches=${BENCH_BATCHES:-200}
slow=${BENCH_SLOW_BATCHES:-20}
started=""
if [ -z "${FLINKGO_KAFKA:-}" ]; then
  FLINKGO_KAFKA=$(testdata/kafka/kafka.sh start)
  started=yes
  trap 'testdata/kafka/kafka.sh stop >/dev/null 2>&1 || true' EXIT
fi
export FLINKGO_KAFKA
cmd=(go test -run '^$' -bench 'ServeKafka/store=(none|kafka)$' -benchtime "${batches}x" -count "$count" -timeout 30m ./bridge/)
cmd2=(go test -run '^$' -bench 'ServeKafka/store=kafka-flush-per-record$' -benchtime "${slow}x" -count "$count" -timeout 30m ./bridge/)
raw=$(mktemp)
# One unmeasured Kafka-store run first: a broker just started is still
# compiling its hot paths (its CPU per record falls by about 3x over the first
# runs), which would count against whichever mode runs first.
warm=(go test -run '^$' -bench 'ServeKafka/store=kafka$' -benchtime 100x -count 1 -timeout 30m ./bridge/)
"${warm[@]}" >/dev/null 2>&1 || { echo "warm-up run failed: ${warm[*]}" >&2; exit 1; }
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
{ "${cmd[@]}" 2>&1; "${cmd2[@]}" 2>&1; } | grep -E '^(Benchmark|ok|FAIL|PASS|---)' | tee "$raw"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# Median actions/s per mode, and the ratios.
summary=$(awk '/^BenchmarkServeKafka\// {
    split($1, a, "/"); mode = a[2]; sub(/-[0-9]+$/, "", mode)
    for (i = 2; i <= NF; i++) if ($(i) == "actions/s") v[mode] = v[mode] " " $(i-1)
  }
  function median(s,   n, x, i, j, t) {
    n = split(s, x, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (x[j] + 0 < x[i] + 0) { t = x[i]; x[i] = x[j]; x[j] = t }
    return n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
  }
  END {
    none = median(v["store=none"]); k = median(v["store=kafka"]); f = median(v["store=kafka-flush-per-record"])
    printf "| mode | actions/s (median of the runs) | vs no store |\n|---|---:|---:|\n"
    printf "| no store | %.0f | 1.00 |\n", none
    printf "| Kafka store, group commit | %.0f | %.2f |\n", k, k / none
    printf "| Kafka store, flush per record (upstream) | %.0f | %.2f |\n", f, f / none
    printf "\nGroup commit / flush per record: %.1fx.\n", k / f
  }' "$raw")

{
  echo "# Kafka action-state store: throughput"
  echo
  echo "Produced by \`benchmarks/kafka/run.sh\` on $(date -u +%Y-%m-%d) — $(nproc) cores,"
  echo "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(go version | cut -d' ' -f3),"
  echo "Apache Kafka 4.1.1 (testdata/kafka/kafka.sh, KRaft, one JVM with -Xmx512m) on the same machine"
  echo "$( [ -n "$started" ] && echo "(started by the script)" || echo "(at $FLINKGO_KAFKA)" )."
  echo "Load average before: $load_before; after: $load_after. The machine is shared: figures vary between runs."
  echo
  echo "Commands: \`${cmd[*]}\` and \`${cmd2[*]}\`, after one unmeasured warm-up run of the broker (\`${warm[*]}\`)."
  echo
  echo "$summary"
  echo
  echo "See README.md for what is measured and why the target ratio is not reached here."
  echo
  echo '```'
  cat "$raw"
  echo '```'
} >"$out"
rm -f "$raw"
echo "wrote $out"
