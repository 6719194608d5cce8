#!/usr/bin/env bash
# Runs lockgate's benchmarks. Each reports its own baseline measured in the
# same run — git itself for hooks and CLI commands, doublestar for matching —
# and the ratio to it. Other hook runners (lefthook from npm, gitleaks from
# the Go module proxy, the pre-commit tool) are timed for the record when
# they can be installed; without them the lockgate numbers still run.
# Usage: scripts/bench.sh [output file]   (default: bench.out)
#        scripts/bench.sh scale [output file]   (default: scale.out) only
#        the costs as history grows, ending in the markdown table of
#        BENCHMARKS.md's "Costs as history grows" (most of an hour).
set -euo pipefail
cd "$(dirname "$0")/.."
scale() {
  go test -run '^$' -bench '^BenchmarkScale$' -benchtime 1x -timeout 120m ./cmd/lockgate
}
if [ "${1:-}" = scale ]; then
  out=${2:-scale.out}
  echo "== go test -run '^\$' -bench '^BenchmarkScale\$' -benchtime 1x -timeout 120m ./cmd/lockgate" | tee "$out"
  scale 2>&1 | tee -a "$out"
  exit
fi
out=${1:-bench.out}
case $out in /*) ;; *) out=$PWD/$out ;; esac
tools=$PWD/.cache/bench
mkdir -p "$tools"

if [ ! -x "$tools/node_modules/.bin/lefthook" ] && command -v npm >/dev/null 2>&1; then
  # --ignore-scripts: lefthook's postinstall would install its hooks into
  # this clone (the binary comes in a platform package, not the script).
  npm install --silent --ignore-scripts --prefix "$tools" lefthook >/dev/null 2>&1 || echo "bench: lefthook not installed (npm failed); skipping it" >&2
fi
if [ -x "$tools/node_modules/.bin/lefthook" ]; then
  export LOCKGATE_BENCH_LEFTHOOK="$tools/node_modules/.bin/lefthook"
fi
if [ ! -x "$tools/bin/gitleaks" ]; then
  GOBIN="$tools/bin" go install github.com/zricethezav/gitleaks/v8@latest >/dev/null 2>&1 || echo "bench: gitleaks could not be built; skipping it" >&2
fi
if [ -x "$tools/bin/gitleaks" ]; then
  export LOCKGATE_BENCH_GITLEAKS="$tools/bin/gitleaks"
fi
if command -v pre-commit >/dev/null 2>&1; then
  export LOCKGATE_BENCH_PRECOMMIT=1
fi

: >"$out"
run() {
  echo "== go test $*" | tee -a "$out"
  go test -run '^$' "$@" 2>&1 | tee -a "$out"
}
run -bench 'AcquireRelease|Overlapping' -benchtime 2000x ./model/locks/filestore
run -bench 'List' -benchtime 20x ./model/locks/filestore
run -bench 'Append' -benchtime 2000x ./model/locks/journal
run -bench 'MultiProcess' -benchtime 1x ./model/locks/journal
run -bench 'Evaluate|Matcher' ./scope
run -bench 'Make' ./model/planner
run -bench 'Contention$' -benchtime 1x -timeout 60m ./model/locks
run -bench 'ContentionStores' -benchtime 1x -timeout 30m ./model/locks
# 8 clones racing one key through the git store, 200 rounds: exactly one
# winner each (a test, run here at full length).
echo "== LOCKGATE_TEST_ROUNDS=500 go test -run 'TestProcessRace$' ./model/locks/gitstore" | tee -a "$out"
LOCKGATE_TEST_ROUNDS=500 go test -count=1 -run 'TestProcessRace$' -v -timeout 30m ./model/locks/gitstore 2>&1 | grep -E '^(---|ok|FAIL|PASS)' | tee -a "$out"
run -bench 'CommitEvent' -timeout 30m ./workflow
run -bench 'Events100k' -benchtime 5x -timeout 30m ./workflow
run -bench 'Handover|Covering' -benchtime 20000x -timeout 30m ./model/locks/redisstore
# One acquisition with locks.redis.min_replicas 1 against 0, on a primary
# with one replica on this machine.
run -bench 'AcquireMinReplicas' -benchtime 20000x -timeout 30m ./model/locks/redisstore
# The comparison with redsync is a module of its own (bench/peers), so that
# redsync stays out of lockgate's requirements.
(cd bench/peers && run -bench 'AcquireRelease' -benchtime 20000x -timeout 30m .)
run -bench 'CLI' -benchtime 300x -timeout 60m ./cmd/lockgate
run -bench 'Hook' -benchtime 30x -timeout 60m ./cmd/lockgate
run -bench 'MCP|GuardClaudeCode' -benchtime 2000x -timeout 30m ./cmd/lockgate
run -bench 'GuardHarnesses|RefTx' -benchtime 20x -timeout 30m ./cmd/lockgate
run -bench 'Verify' -benchtime 10x -timeout 60m ./cmd/lockgate
run -bench 'GitStore' -benchtime 30x -timeout 60m ./cmd/lockgate
run -bench 'Frame10k' -benchtime 20x ./frontend/board
# The web board of lockgate serve: 1 and 100 streams and 3 chromium
# pages, the time until a lock taken with the CLI shows on them.
run -bench 'ServeBoard' -benchtime 20x -timeout 30m ./cmd/lockgate
# lockgate serve: one page of git-lfs's list (100 locks) with 10, 1,000
# and 10,000 locks in the file store, as a ratio to the 10-lock page.
run -bench 'LFSPage' -benchtime 200x -timeout 30m ./service
# lockgate serve: acquire+release through the JSON API by 64 concurrent
# clients against 1, on the file and Redis stores.
run -bench 'ServeLocks' -benchtime 640x -timeout 60m ./frontend/httpserver
# The work queue: claim with 100 to 10,000 packages on every store, and a
# fleet of 13 workers draining 200 packages on the git store and Redis
# against plain git (LOCKGATE_BENCH_FLEET_PACKAGES and the other
# LOCKGATE_BENCH_FLEET_* variables resize it).
run -bench 'ClaimQueue' -benchtime 20x -timeout 60m ./cmd/lockgate
run -bench 'QueueFleet' -benchtime 1x -timeout 120m ./cmd/lockgate
# Costs as history grows: the everyday commands at 10^3, 10^4 and 10^5
# lock operations of history on every store, printed as one markdown
# table (BENCHMARKS.md; `scripts/bench.sh scale` runs only this).
echo "== go test -run '^\$' -bench '^BenchmarkScale\$' -benchtime 1x -timeout 120m ./cmd/lockgate" | tee -a "$out"
scale 2>&1 | tee -a "$out"
echo "results in $out" >&2
