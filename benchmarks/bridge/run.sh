#!/usr/bin/env bash
# The bridge benchmark: Flink map vs the Go passthrough agent on a MiniCluster, same machine (see
# README.md). Builds bin/flinkgo-testagent and the shim's test classes, runs
# io.flinkgo.shim.bench.BridgeBench in rounds of one JVM per pipeline (a map JVM and a bridge JVM
# back to back, alternating which goes first), each JVM running a warm-up and one run per
# parallelism, then puts the runs in one table (BridgeBench's bench.report); then (PROFILE=1, the
# default) a profiled bridge-only run with JFR (JVM) and go.cpuprofile (Go), and writes RESULTS.md
# beside this script.
#
# Usage: benchmarks/bridge/run.sh   (from anywhere; about 10 minutes on 2 cores)
#   ROWS=16000000 WARMUP_ROWS=4000000 PARALLELISM=1,2 REPEATS=3 PROFILE=1 HOP=1   (the defaults;
#   HOP=1 adds HopBench by row size, HOP_PAYLOADS and HOP_BYTES, and the job with
#   SWEEP_PAYLOAD-character payloads; THREADS=1 adds a map and a bridge run at p=1 measured by
#   threadstat.py: each thread's CPU and run-queue time)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/benchmarks/bridge
out=$here/RESULTS.md
ROWS=${ROWS:-16000000}
WARMUP_ROWS=${WARMUP_ROWS:-4000000}
PARALLELISM=${PARALLELISM:-1,2}
REPEATS=${REPEATS:-3}
PROFILE=${PROFILE:-1}
HOP=${HOP:-1}
THREADS=${THREADS:-1}
HOP_PAYLOADS=${HOP_PAYLOADS:-170,1000,4000,16000}
HOP_BYTES=${HOP_BYTES:-1000000000}
SWEEP_PAYLOAD=${SWEEP_PAYLOAD:-4000}
SWEEP_ROWS=${SWEEP_ROWS:-400000}
MVN=${MVN:-mvn -B -q -ntp}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cd "$root"
go build -o bin/flinkgo-testagent ./cmd/flinkgo-testagent
agent=$root/bin/flinkgo-testagent

cd "$root/java-shim"
$MVN -Pbench test-compile >/dev/null
bench() { # extra -D arguments
  $MVN -Pbench exec:exec -Dflinkgo.testagent="$agent" "$@" 2>&1 | sed -u 's/\x1b\[[0-9;]*m//g' |
    grep --line-buffered -E '^(map|bridge)-p|^Exception|^Caused|ERROR' || true
}
# rounds <label> <rows> <warm-up rows> [-D...]: REPEATS rounds; round r runs a map JVM and a bridge
# JVM (bridge first when r is odd), each a warm-up at p=1 and one run per parallelism, appending
# to $work/<label>.tsv; then the table of them all in $work/<label>.md. One JVM per pipeline: in
# a JVM that has run the bridge, the map job is up to 40 % slower (HISTORY.md, "The twenty-first
# session").
rounds() {
  local label=$1 rows=$2 warm=$3 r pl order
  shift 3
  : >"$work/$label.tsv"
  for ((r = 0; r < REPEATS; r++)); do
    order="map bridge"
    if ((r % 2 == 1)); then order="bridge map"; fi
    for pl in $order; do
      bench -Dbench.pipelines="$pl" -Dbench.rows="$rows" -Dbench.warmupRows="$warm" -Dbench.parallelism="$PARALLELISM" \
        -Dbench.repeats=1 -Dbench.roundBase="$r" -Dbench.runsOut="$work/$label.tsv" "$@"
    done
  done
  $MVN -Pbench exec:exec -Dflinkgo.testagent="$agent" -Dbench.report="$work/$label.tsv" -Dbench.out="$work/$label.md" >/dev/null
  [ -s "$work/$label.md" ] || { echo "the benchmark wrote no figures for $label; see the output above" >&2; exit 1; }
}
roundcmd() { # the command of one JVM of a round, for RESULTS.md
  echo "for r in 0..$((REPEATS - 1)): for pl in map bridge (bridge first when r is odd):"
  echo "  mvn -B -q -ntp -Pbench exec:exec -Dflinkgo.testagent=$agent -Dbench.pipelines=\$pl -Dbench.rows=$1 -Dbench.warmupRows=$2 -Dbench.parallelism=$PARALLELISM -Dbench.repeats=1 -Dbench.roundBase=\$r -Dbench.runsOut=<runs.tsv>${3:+ $3}"
  echo "mvn -B -q -ntp -Pbench exec:exec -Dflinkgo.testagent=$agent -Dbench.report=<runs.tsv> -Dbench.out=<table>"
}
cmd=$(roundcmd "$ROWS" "$WARMUP_ROWS")

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
start=$(date +%s)
rounds table "$ROWS" "$WARMUP_ROWS" | tee "$work/runs.txt"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

if [ "$PROFILE" = 1 ]; then
  jh=$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")
  # JFR's profile settings, sampling Java every 2 ms instead of 10 ms.
  sed 's|method-sampling-java-interval">10 ms<|method-sampling-java-interval">2 ms<|' "$jh/lib/jfr/profile.jfc" >"$work/sample.jfc"
  pcmd="mvn -B -q -ntp -Pbench exec:exec -Dflinkgo.testagent=$agent -Dbench.rows=$ROWS -Dbench.warmupRows=$WARMUP_ROWS -Dbench.parallelism=1 -Dbench.repeats=1 -Dbench.pipelines=bridge -Dbench.profileDir=<dir> \"-Dbench.jvmArgs=-Xms1g -Xmx1g -XX:StartFlightRecording=filename=<dir>/jvm.jfr,settings=<profile.jfc with 2 ms sampling>\""
  bench -Dbench.rows="$ROWS" -Dbench.warmupRows="$WARMUP_ROWS" -Dbench.parallelism=1 -Dbench.repeats=1 -Dbench.pipelines=bridge \
    -Dbench.profileDir="$work" "-Dbench.jvmArgs=-Xms1g -Xmx1g -XX:StartFlightRecording=filename=$work/jvm.jfr,settings=$work/sample.jfc" |
    tee "$work/profiled.txt"
  go tool pprof -top -cum -nodecount=40 "$agent" "$work"/go-bridge-p1-r0.pprof.0 2>/dev/null | sed -n '1,50p' >"$work/go-top.txt" || true
  jfr print --events jdk.ExecutionSample "$work/jvm.jfr" | awk -f "$here/jfr-summary.awk" >"$work/jfr-top.txt" || true
fi
if [ "$THREADS" = 1 ]; then
  # Where each thread's time goes inside the measured run (p=1): on a CPU, or runnable and waiting
  # for one (HISTORY.md, "The twenty-third session"). The task thread of the run is the second of
  # its name in the JVM (the warm-up's is the first).
  for pl in map bridge; do
    if [ "$pl" = map ]; then th=copy-row win=2; else th=GoAgent win=5; fi
    python3 "$here/threadstat.py" --thread "$th" --nth 2 --after 1 --for "$win" >"$work/threads-$pl.txt" 2>&1 &
    tpid=$!
    bench -Dbench.pipelines="$pl" -Dbench.rows="$ROWS" -Dbench.warmupRows="$WARMUP_ROWS" -Dbench.parallelism=1 \
      -Dbench.repeats=1 | tee "$work/threads-$pl-run.txt"
    wait "$tpid" || true
  done
  tcmd="python3 benchmarks/bridge/threadstat.py --thread <copy-row | GoAgent> --nth 2 --after 1 --for <2 | 5> &
mvn -B -q -ntp -Pbench exec:exec -Dflinkgo.testagent=$agent -Dbench.pipelines=<map | bridge> -Dbench.rows=$ROWS -Dbench.warmupRows=$WARMUP_ROWS -Dbench.parallelism=1 -Dbench.repeats=1"
fi
if [ "$HOP" = 1 ]; then
  # The Arrow hop on its own (HopBench: the shim's writer, session and reader with the real
  # test agent, no Flink network), by row size.
  hcmd="mvn -B -q -ntp -Pbench exec:exec -Dflinkgo.testagent=$agent -Dbench.main=io.flinkgo.shim.bench.HopBench \"-Dbench.jvmArgs=-Xms1g -Xmx1g -Dhop.payloads=$HOP_PAYLOADS -Dhop.bytes=$HOP_BYTES -Dhop.repeats=$REPEATS -Dhop.out=<table>\""
  $MVN -Pbench exec:exec -Dflinkgo.testagent="$agent" -Dbench.main=io.flinkgo.shim.bench.HopBench \
    "-Dbench.jvmArgs=-Xms1g -Xmx1g -Dhop.payloads=$HOP_PAYLOADS -Dhop.bytes=$HOP_BYTES -Dhop.repeats=$REPEATS -Dhop.out=$work/hop.md" 2>&1 |
    sed -u 's/\x1b\[[0-9;]*m//g' | grep --line-buffered -E '^hop-|^Exception|^Caused|ERROR' | tee "$work/hop-runs.txt" || true
  # The same job with bigger rows: where the per-row costs stop dominating.
  rounds sweep "$SWEEP_ROWS" "$SWEEP_ROWS" -Dbench.payloadChars="$SWEEP_PAYLOAD" | tee "$work/sweep-runs.txt"
  scmd=$(roundcmd "$SWEEP_ROWS" "$SWEEP_ROWS" "-Dbench.payloadChars=$SWEEP_PAYLOAD")
fi
seconds=$(( $(date +%s) - start ))

flink=$(sed -n 's|.*<flink.version>\(.*\)</flink.version>.*|\1|p' "$root/java-shim/pom.xml")
arrow=$(sed -n 's|.*<arrow.version>\(.*\)</arrow.version>.*|\1|p' "$root/java-shim/pom.xml")
arrow_go=$(grep -m1 'apache/arrow-go' "$root/go.mod" | awk '{print $2}')
{
  echo "# Bridge benchmark results"
  echo
  echo "Produced by \`benchmarks/bridge/run.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC') in ${seconds} s"
  echo "(commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown) plus the working tree). See README.md for what is measured and how to read it."
  echo
  echo "## Machine"
  echo
  echo "- $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo) RAM, $(uname -sr)"
  echo "- load average (1/5/15 min) before: $load_before; after the figures: $load_after"
  echo "  (the machine is shared: other jobs inflate wall times; the CPU columns count this JVM's and the Go processes' own CPU time)"
  echo
  echo "## Versions"
  echo
  echo "- $(go version | cut -d' ' -f3), arrow-go $arrow_go"
  echo "- $(java -version 2>&1 | head -1), Flink $flink (MiniCluster), Arrow Java $arrow"
  echo "- $(mvn -v 2>/dev/null | head -1 | sed 's/\x1b\[[0-9;]*m//g')"
  echo
  echo "## Command"
  echo
  echo '```'
  echo "ROWS=$ROWS WARMUP_ROWS=$WARMUP_ROWS PARALLELISM=$PARALLELISM REPEATS=$REPEATS PROFILE=$PROFILE HOP=$HOP benchmarks/bridge/run.sh"
  echo "# which runs, in java-shim/:"
  echo "$cmd"
  echo '```'
  echo
  echo "## Figures"
  echo
  cat "$work/table.md"
  echo
  echo "Every run, in the order run (each JVM's warm-up first; rows/s over first→last row at the sinks):"
  echo
  echo '```'
  cat "$work/runs.txt"
  echo '```'
  if [ "$HOP" = 1 ]; then
    echo
    echo "## The Arrow hop on its own, by row size (HopBench)"
    echo
    echo "JVM→Go→JVM through the shim's BatchWriter, GoSession and OutputReader with the real test agent, no"
    echo "Flink job; the median of $REPEATS runs of $HOP_BYTES input bytes each (README.md, \"The Arrow hop\")."
    echo
    echo '```'
    echo "$hcmd"
    echo '```'
    echo
    cat "$work/hop.md"
    echo
    echo '```'
    cat "$work/hop-runs.txt"
    echo '```'
    echo
    echo "## The job with $SWEEP_PAYLOAD-character payloads"
    echo
    echo '```'
    echo "$scmd"
    echo '```'
    echo
    cat "$work/sweep.md"
    echo
    echo '```'
    cat "$work/sweep-runs.txt"
    echo '```'
  fi
  if [ "$THREADS" = 1 ]; then
    echo
    echo "## Where the threads' time goes (p=1, $ROWS rows)"
    echo
    echo "threadstat.py over a window inside the measured run: run% on a CPU, runq% runnable but waiting for"
    echo "one, and context switches per second (HISTORY.md, \"The twenty-third session\")."
    echo
    echo '```'
    echo "$tcmd"
    for pl in map bridge; do
      echo
      cat "$work/threads-$pl-run.txt"
      cat "$work/threads-$pl.txt"
    done
    echo '```'
  fi
  if [ "$PROFILE" = 1 ]; then
    echo
    echo "## Profile of one bridge run (p=1, $ROWS rows)"
    echo
    echo '```'
    echo "$pcmd"
    cat "$work/profiled.txt"
    echo '```'
    echo
    echo "### Go: \`go tool pprof -top -cum\` (go.cpuprofile)"
    echo
    echo '```'
    cat "$work/go-top.txt"
    echo '```'
    echo
    echo "### JVM: JFR execution samples (\`jfr print --events jdk.ExecutionSample | awk -f benchmarks/bridge/jfr-summary.awk\`)"
    echo
    echo '```'
    cat "$work/jfr-top.txt"
    echo '```'
  fi
} >"$out"
echo "wrote $out"
