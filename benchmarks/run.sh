#!/usr/bin/env bash
# make bench: every benchmark of the project, each writing its RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")"
./go/run.sh
for b in bridge pyflink kafka; do
  if [ -x "$b/run.sh" ]; then "./$b/run.sh"; fi
done
