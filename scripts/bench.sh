#!/usr/bin/env bash
# Runs lockgate's benchmarks; each reports its own baseline (git, or an
# in-process floor) measured in the same run, and the ratio to it.
# Usage: scripts/bench.sh [output file]   (default: bench.out)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench.out}
: >"$out"
run() {
  echo "== go test $*" | tee -a "$out"
  go test -run '^$' "$@" 2>&1 | tee -a "$out"
}
run -bench 'AcquireRelease|Overlapping|List' -benchtime 2000x ./workflow/filestore
run -bench 'Append' -benchtime 2000x ./workflow/journal
run -bench 'Canonical|Overlap' ./workflow/lockkey
run -bench 'Contention' -benchtime 1x -timeout 60m ./workflow
run -bench 'CLI' -benchtime 300x -timeout 60m ./cmd/lockgate
echo "results in $out" >&2
