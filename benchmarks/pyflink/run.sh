#!/usr/bin/env bash
# PyFlink job through the Go agent vs the same logic as a PyFlink Python
# KeyedProcessFunction, same machine, same run. Needs `make python-shim`
# (the venv at .venv with apache-flink 2.3.0 and the flinkgo package).
# Writes results.json and RESULTS.md beside this script (about 2 minutes).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
py=${PY:-$top/.venv/bin/python}
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
"$py" "$top/python-shim/bench/bench_pyflink.py" --binary "$top/bin/orderscoring" "$here/results.json"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
"$py" - "$here/results.json" "$here/RESULTS.md" "$load_before" "$load_after" <<'PY'
import json, sys, platform, os, subprocess
res = json.load(open(sys.argv[1]))
out = open(sys.argv[2], "w")
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
out.write("# PyFlink: Go agent vs Python KeyedProcessFunction\n\n")
out.write(f"Produced by `benchmarks/pyflink/run.sh` — {os.cpu_count()} cores, {cpu}, Python {platform.python_version()}, "
          f"apache-flink 2.3.0. Load average before {sys.argv[3]}, after {sys.argv[4]}.\n\n")
out.write("Same generated orders (Flink SQL datagen), same per-customer logic (order count, last 5 amounts, "
          "the risk function), discarding sink, parallelism 1; throughput = rows / the job's net runtime "
          "(includes starting the Go process or the Python workers).\n\n")
out.write("```json\n" + json.dumps(res, indent=2, sort_keys=True) + "\n```\n")
PY
echo "wrote $here/RESULTS.md"
