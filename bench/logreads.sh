#!/usr/bin/env bash
# Times `lockgate verify --range` of 5 commits and `lockgate log --since 1h`
# against lock logs of 10, 2,000 and 20,000 older events (on the workflow
# branch and in the journal), with the binary of BASE (default main) and
# of the work tree, in one run, each in its own copy of the repository
# (their events caches differ). Prints the medians of RUNS runs (default
# 15) after one warm-up run, wall time and CPU time (user and system, of
# lockgate and the git it runs: steadier than wall time on a busy
# machine), and the ratio of the CPU times.
#
#   bench/logreads.sh [BASE] [RUNS]
set -euo pipefail
base=${1:-main}
runs=${2:-15}
root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$tmp/base-src" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git -C "$root" worktree add -q --detach "$tmp/base-src" "$base"
(cd "$tmp/base-src" && go build -o "$tmp/before" ./cmd/lockgate)
(cd "$root" && go build -o "$tmp/after" ./cmd/lockgate)
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 LOCKGATE_WORKER=me
export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@example.com GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@example.com
now=$(date +%s)

seed() { # seed DIR N
	local dir=$1 n=$2
	git init -q -b main "$dir"
	printf 'version: 1\nworkflow:\n  auto_commit: true\n' >"$dir/.lockgate.yaml"
	mkdir -p "$dir/src" "$dir/.git/lockgate"
	echo 'package a' >"$dir/src/a.go"
	git -C "$dir" add -A
	GIT_COMMITTER_DATE="@$((now - 3600))" GIT_AUTHOR_DATE="@$((now - 3600))" git -C "$dir" commit -qm init
	git -C "$dir" tag init
	for i in 1 2 3 4 5; do
		echo "// $i" >>"$dir/src/a.go"
		GIT_COMMITTER_DATE="@$((now - 600 + i))" GIT_AUTHOR_DATE="@$((now - 600 + i))" git -C "$dir" commit -qam "change $i"
	done
	python3 - "$dir" "$n" "$now" <<'PY'
import hashlib, json, subprocess, sys, datetime
d, n, now = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def ts(t): return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')
evs = []
for i in range(n):
    t = now - 10*86400 + 10*i
    evs.append({"id": "%016x%016x" % (t*10**9, i), "timestamp": ts(t), "worker": "other", "worker_type": "agent",
                "action": "lock_acquire", "key": "src/old/%d.go" % i, "session": "other", "fence": i+1,
                "expires_at": ts(t+3600), "store": "file"})
for i in range(5):
    t = now - 1800 + 60*i
    evs.append({"id": "%016x%016x" % (t*10**9, n+i), "timestamp": ts(t), "worker": "other", "worker_type": "agent",
                "action": "lock_acquire", "key": "src/new/%d.go" % i, "session": "other", "fence": n+i+1,
                "expires_at": ts(t+3600), "store": "file"})
lines = [json.dumps(e, separators=(',', ':')) + "\n" for e in evs]
with open(d + "/.git/lockgate/events.jsonl", "w") as f:
    f.writelines(lines)
fi = ["commit refs/heads/lockgate/workflow\ncommitter lockgate <lockgate@localhost> %d +0000\ndata 7\nhistory\n" % now]
for e, l in zip(evs, lines):
    h = hashlib.sha256(e["id"].encode()).hexdigest()
    b = l.encode()
    fi.append("M 100644 inline events/%s/%s/%s.json\ndata %d\n" % (h[:2], h[2:4], e["id"], len(b)))
    fi.append(b.decode())
subprocess.run(["git", "-C", d, "fast-import", "--quiet"], input="".join(fi).encode(), check=True)
PY
	git -C "$dir" repack -adq
}

ms() { # ms BIN DIR ARGS...: median wall and CPU (user+sys, git included) milliseconds of RUNS runs
	local bin=$1 dir=$2
	shift 2
	(cd "$dir" && "$bin" "$@" >/dev/null 2>&1) || true # warm-up
	local out="$tmp/time"
	: >"$out"
	for _ in $(seq "$runs"); do
		(cd "$dir" && /usr/bin/time -a -o "$out" -f '%e %U %S' "$bin" "$@" >/dev/null 2>&1) || true
	done
	local w c
	w=$(awk '{print $1 * 1000}' "$out" | sort -n | awk '{a[NR] = $1} END {printf "%.0f", a[int((NR + 1) / 2)]}')
	c=$(awk '{print ($2 + $3) * 1000}' "$out" | sort -n | awk '{a[NR] = $1} END {printf "%.0f", a[int((NR + 1) / 2)]}')
	echo "$w $c"
}

printf '| command | older events | %s: wall ms | CPU ms | this tree: wall ms | CPU ms | CPU × %s |\n|---|---|---|---|---|---|---|\n' "$base" "$base"
for n in 10 2000 20000; do
	seed "$tmp/r$n" "$n"
	cp -r "$tmp/r$n" "$tmp/b$n"
	# A lock taken and released, as in any clone: each binary commits the
	# journal's events the branch lacks, and leaves its mark.
	for d in "b$n:before" "r$n:after"; do
		(cd "$tmp/${d%%:*}" && "$tmp/${d##*:}" lock acquire src/z.go >/dev/null 2>&1 && "$tmp/${d##*:}" lock release src/z.go >/dev/null 2>&1)
	done
	for cmd in "verify --range init..HEAD" "log --since 1h"; do
		# shellcheck disable=SC2086
		read -r bw bc < <(ms "$tmp/before" "$tmp/b$n" $cmd)
		# shellcheck disable=SC2086
		read -r aw ac < <(ms "$tmp/after" "$tmp/r$n" $cmd)
		# shellcheck disable=SC2016 # the backquotes are Markdown's
		printf '| `%s` | %s | %s | %s | %s | %s | %s |\n' "$cmd" "$n" "$bw" "$bc" "$aw" "$ac" "$(awk -v a="$ac" -v b="$bc" 'BEGIN {printf "%.2f", a/b}')"
	done
done
