#!/usr/bin/env bash
# Kafka action-state store benchmark (benchmarks/kafka/README.md): the
# order-scoring agent through the bridge server (bridge.BenchmarkServeKafka)
# without a store, with the Kafka store (group commit) and with one flush
# per record, on a real broker. Writes RESULTS.md beside this script with the
# machine, the load and the raw output.
# Usage: benchmarks/kafka/run.sh   (from anywhere; about 3 minutes)
#   FLINKGO_KAFKA=host:port  use that broker instead of starting one
#   KAFKA_STATE_DIR=dir      the started broker's data directory (default: a
#     directory in /dev/shm when that is a writable tmpfs, else kafka.sh's)
#   BENCH_COUNT=5 BENCH_BATCHES=200 BENCH_SLOW_BATCHES=20
#     rounds (one run per mode each), and 1024-row batches per run (the
#     flush-per-record mode, about 5k actions/s, runs BENCH_SLOW_BATCHES)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=benchmarks/kafka/RESULTS.md
count=${BENCH_COUNT:-5}
batches=${BENCH_BATCHES:-200}
slow=${BENCH_SLOW_BATCHES:-20}
started=""
state_dir="" # the started broker's, as kafka.sh names it
broker_pid=""
if [ -z "${FLINKGO_KAFKA:-}" ]; then
  # The broker shares the machine's cores with the Go process here (in a
  # deployment it runs on its own machines). On ext4 its log appends cost it
  # four to five times the kernel CPU they cost on tmpfs (README.md, "Seventh
  # session"); Kafka does not fsync its log either way (its durability is
  # replication and acks=all), so the broker behaves the same on both.
  if [ -z "${KAFKA_STATE_DIR:-}" ] && [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] && [ -w /dev/shm ]; then
    export KAFKA_STATE_DIR=/dev/shm/flinkgo-kafka-bench
  fi
  FLINKGO_KAFKA=$(testdata/kafka/kafka.sh start)
  started=yes
  trap 'testdata/kafka/kafka.sh stop >/dev/null 2>&1 || true' EXIT
  state_dir=${KAFKA_STATE_DIR:-${TMPDIR:-/tmp}/flinkgo-kafka-${KAFKA_PORT:-19092}}
  broker_pid=$(cat "$state_dir/kafka.pid")
fi
export FLINKGO_KAFKA
# broker_cpu prints the CPU seconds the started broker has used (user +
# system, all threads), or nothing.
broker_cpu() {
  [ -n "$broker_pid" ] && awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$broker_pid/stat" 2>/dev/null
}
# The two modes run in rounds, one run of each per round, in alternating
# order: this machine's speed drifts by 10-40 % over minutes, and a ratio
# of two runs made seconds apart is steadier than one of two medians taken
# minutes apart.
bindir=$(mktemp -d)
bin=$bindir/bridge.test
go test -c -o "$bin" ./bridge/
run() { (cd bridge && "$bin" -test.run '^$' -test.bench "ServeKafka/store=$1\$" -test.benchtime "$2x" -test.count 1 -test.timeout 30m); }
# measured runs one benchmark run and appends to its result line the broker's
# CPU seconds over the whole process (setup, the testing package's one-op
# probe run, the timed run, teardown), when it is known.
measured() {
  local b0 b1
  b0=$(broker_cpu)
  run "$1" "$2" 2>&1 | grep -E '^(Benchmark|FAIL|---)' | while IFS= read -r line; do
    b1=$(broker_cpu)
    if [ -n "$b0" ] && [[ $line == Benchmark* ]]; then line="$line	$(awk -v a="$b0" -v b="$b1" 'BEGIN{printf "%.2f", b - a}') broker-cpu-s"; fi
    printf '%s\n' "$line"
  done
}
cmd="bridge.test (go test -c ./bridge/) -test.bench 'ServeKafka/store=MODE\$' -test.benchtime ${batches}x, MODE none and kafka alternating, $count rounds; then kafka-flush-per-record, ${slow}x, $count runs"
raw=$(mktemp)
# Unmeasured Kafka-store runs first: a broker just started is still
# compiling its hot paths (its CPU per record falls by about 3x over the first
# runs), which would count against the store. One run of 100 batches was
# not enough: in the two runs of the sixth session the first two rounds'
# ratios were the lowest (0.39 0.36 | 0.42 0.45, then 0.41-0.51).
warm="bridge.test -test.bench 'ServeKafka/store=kafka\$' -test.benchtime 200x, three times"
for _ in 1 2 3; do run kafka 200 >/dev/null 2>&1 || { echo "warm-up run failed: $warm" >&2; exit 1; }; done
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for r in $(seq 1 "$count"); do
  if [ $((r % 2)) -eq 1 ]; then order="none kafka"; else order="kafka none"; fi
  for m in $order; do measured "$m" "$batches" | sed "s/^/round $r: /" | tee -a "$raw"; done
done
for r in $(seq 1 "$count"); do measured kafka-flush-per-record "$slow" | sed "s/^/round $r: /" | tee -a "$raw"; done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
if grep -q -E 'FAIL|^round [0-9]+: ---' "$raw"; then echo "a benchmark run failed (see above)" >&2; exit 1; fi

# Median actions/s per mode, the ratios of the medians and the median of the
# rounds' ratios.
summary=$(awk '/BenchmarkServeKafka\// {
    r = $2 + 0; split($3, a, "/"); mode = a[2]; sub(/-[0-9]+$/, "", mode)
    for (i = 4; i <= NF; i++) {
      if ($(i) == "actions/s") { v[mode] = v[mode] " " $(i-1); by[mode, r] = $(i-1) }
      if ($(i) == "broker-cpu-s") bc[mode] = bc[mode] " " $(i-1)
    }
    if (r > rounds) rounds = r
  }
  function median(s,   n, x, i, j, t) {
    n = split(s, x, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (x[j] + 0 < x[i] + 0) { t = x[i]; x[i] = x[j]; x[j] = t }
    return n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
  }
  END {
    none = median(v["store=none"]); k = median(v["store=kafka"]); f = median(v["store=kafka-flush-per-record"])
    for (r = 1; r <= rounds; r++) if (by["store=none", r] > 0 && by["store=kafka", r] > 0) {
      q = by["store=kafka", r] / by["store=none", r]; ratios = ratios " " q; list = list sprintf(" %.2f", q)
    }
    printf "| mode | actions/s (median of the runs) | vs no store | broker CPU per run (median) |\n|---|---:|---:|---:|\n"
    printf "| no store | %.0f | 1.00 | %s |\n", none, bc["store=none"] ? median(bc["store=none"]) " s" : "-"
    printf "| Kafka store, group commit | %.0f | %.2f | %s |\n", k, k / none, bc["store=kafka"] ? median(bc["store=kafka"]) " s" : "-"
    printf "| Kafka store, flush per record (upstream) | %.0f | %.2f | %s |\n", f, f / none, bc["store=kafka-flush-per-record"] ? median(bc["store=kafka-flush-per-record"]) " s" : "-"
    mr = median(ratios)
    printf "\nKafka store / no store, per round (runs seconds apart):%s; median %.2f.\n", list, mr
    printf "Group commit / flush per record: %.1fx.\n", k / f
    printf "\nTarget (the Kafka store at 0.5 of the store-less rate or more, by the ratio of the medians and by the median of the rounds): %s.\n", (k / none >= 0.5 && mr >= 0.5) ? "met in this run" : "not met in this run"
  }' "$raw")

{
  echo "# Kafka action-state store: throughput"
  echo
  echo "Produced by \`benchmarks/kafka/run.sh\` on $(date -u +%Y-%m-%d) — $(nproc) cores,"
  echo "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(go version | cut -d' ' -f3),"
  echo "Apache Kafka 4.1.1 (testdata/kafka/kafka.sh, KRaft, one JVM with -Xmx512m) on the same machine"
  echo "$( [ -n "$started" ] && echo "(started by the script, data in $state_dir on $(stat -f -c %T "$state_dir" 2>/dev/null || echo '?'))" || echo "(at $FLINKGO_KAFKA)" )."
  echo "Load average before: $load_before; after: $load_after. The machine is shared: figures vary between runs."
  echo
  echo "Commands: $cmd; after unmeasured warm-up runs of the broker ($warm)."
  echo
  echo "$summary"
  echo
  echo "See README.md for what is measured, the broker's share of the machine, and the earlier runs."
  echo
  echo '```'
  cat "$raw"
  echo '```'
} >"$out"
rm -rf "$raw" "$bindir"
echo "wrote $out"
