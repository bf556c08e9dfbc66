#!/usr/bin/env bash
# make bench: every benchmark of the project, each writing its RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")"
./go/run.sh
if [ -x bridge/run.sh ]; then ./bridge/run.sh; fi
