#!/usr/bin/env bash
# Times the real git-lfs client against `lockgate serve` and against
# Gitea's git-lfs locks, on this machine, in one run, pair by pair (each
# round runs both, in alternating order), and prints the medians and the
# median of the per-round ratios lockgate/Gitea as the table of
# BENCHMARKS.md's "git-lfs against Gitea". Not part of `make bench`:
# Gitea is a benchmark peer, built once from its module into a cache
# outside the repository (never a dependency of lockgate's module).
#
# Usage: scripts/bench-gitea.sh [rounds]      (default 15)
# GITEA_BIN   the Gitea binary (default ~/.cache/lockgate/gitea/gitea-1.27.3)
# GITEA_SRC   its source tree, whose templates and options a build
#             without bindata reads (default ~/.cache/lockgate/gitea/src)
# LOCKGATE_BIN  lockgate (default: built from this checkout)
# LOCKS_FEW, LOCKS_MANY  the two table sizes (default 10 and 1000)
# AUTO_COMMIT  lockgate's workflow.auto_commit (default true, as
#             `lockgate init` writes it: each lock and unlock also
#             commits its event to the workflow branch)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-15}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/lockgate/gitea
gitea=${GITEA_BIN:-$cache/gitea-1.27.3}
gsrc=${GITEA_SRC:-$cache/src}
auto_commit=${AUTO_COMMIT:-true}
few=${LOCKS_FEW:-10}
many=${LOCKS_MANY:-1000}

if [ ! -x "$gitea" ] || [ ! -d "$gsrc/options" ] || [ ! -d "$gsrc/templates" ]; then
  cat >&2 <<EOF
bench-gitea: no Gitea binary at $gitea, or no Gitea source (templates,
options) at $gsrc. Build Gitea 1.27.3 once (about 12 minutes of go build
on 2 cores), outside this repository:

  mkdir -p $cache && cd $cache
  GOFLAGS=-mod=mod go mod download code.gitea.io/gitea@v1.27.3
  cp -r "\$(go env GOMODCACHE)/code.gitea.io/gitea@v1.27.3" src && chmod -R u+w src
  (cd src && go build -trimpath -o ../gitea-1.27.3 .)

(Its go.mod has replace directives, so \`go install …@v1.27.3\` refuses
it; its default SQLite driver is pure Go and needs no build tags.)
EOF
  exit 2
fi
for tool in git git-lfs curl; do
  command -v "$tool" >/dev/null || { echo "bench-gitea: $tool is not installed" >&2; exit 2; }
done

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  [ -n "${BENCH_KEEP:-}" ] && echo "bench-gitea: kept $work" >&2 || rm -rf "$work"
}
trap cleanup EXIT
export HOME=$work/home GIT_CONFIG_NOSYSTEM=1 GIT_TERMINAL_PROMPT=0
mkdir -p "$HOME"
git config --global user.name bench
git config --global user.email bench@example.com
git config --global init.defaultBranch main
git lfs install >/dev/null

lockgate=${LOCKGATE_BIN:-}
if [ -z "$lockgate" ]; then
  lockgate=$work/lockgate
  CGO_ENABLED=0 go build -trimpath -o "$lockgate" ./cmd/lockgate
fi

# freeport prints a port nothing listens on now.
freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# waitfor URL: until it answers (30 s at most).
waitfor() {
  for _ in $(seq 300); do curl -fs -o /dev/null "$1" && return 0; sleep 0.1; done
  echo "bench-gitea: $1 never answered" >&2; exit 1
}
keys() { seq -f "art/f%05g.psd" 1 "$1"; }

# --- Gitea: SQLite, LFS on, one admin user, one repository per table size.
gw=$work/gitea
gport=$(freeport)
mkdir -p "$gw/custom/conf"
cat >"$gw/custom/conf/app.ini" <<EOF
APP_NAME = bench
RUN_MODE = prod
WORK_PATH = $gw
; this machine's tests run as root, which Gitea refuses unless told
I_AM_BEING_UNSAFE_RUNNING_AS_ROOT = true
[server]
HTTP_ADDR = 127.0.0.1
HTTP_PORT = $gport
ROOT_URL = http://127.0.0.1:$gport/
OFFLINE_MODE = true
LFS_START_SERVER = true
STATIC_ROOT_PATH = $gsrc
APP_DATA_PATH = $gw/data
[database]
DB_TYPE = sqlite3
PATH = $gw/data/gitea.db
[repository]
ROOT = $gw/repos
[lfs]
PATH = $gw/data/lfs
[security]
INSTALL_LOCK = true
[service]
DISABLE_REGISTRATION = true
[mailer]
ENABLED = false
[log]
MODE = file
LEVEL = Warn
ROOT_PATH = $gw/log
EOF
ini=$gw/custom/conf/app.ini
{
  echo "[security]"
  echo "SECRET_KEY = $("$gitea" generate secret SECRET_KEY)"
  echo "INTERNAL_TOKEN = $("$gitea" generate secret INTERNAL_TOKEN)"
  echo "[server]"
  echo "LFS_JWT_SECRET = $("$gitea" generate secret LFS_JWT_SECRET)"
  echo "[oauth2]"
  echo "JWT_SECRET = $("$gitea" generate secret JWT_SECRET)"
} >>"$ini"
(cd "$gw" && "$gitea" --work-path "$gw" --config "$ini" migrate >"$gw/migrate.log" 2>&1)
(cd "$gw" && "$gitea" --work-path "$gw" --config "$ini" admin user create --admin --username bench \
  --password 'bench-Passw0rd!' --email bench@example.com --must-change-password=false >/dev/null)
gtoken=$(cd "$gw" && "$gitea" --work-path "$gw" --config "$ini" admin user generate-access-token \
  --username bench --token-name bench --scopes all --raw)
(cd "$gw" && exec "$gitea" --work-path "$gw" --config "$ini" web >"$gw/web.log" 2>&1) &
pids+=($!)
waitfor "http://127.0.0.1:$gport/api/healthz"
for n in $few $many; do
  curl -fs -o /dev/null -u "bench:$gtoken" -H 'Content-Type: application/json' \
    -d "{\"name\":\"r$n\",\"auto_init\":true}" "http://127.0.0.1:$gport/api/v1/user/repos"
  # The locks, through Gitea's own git-lfs API, in one curl process.
  cfg=$gw/locks$n.curl
  : >"$cfg"
  for k in $(keys "$n"); do
    [ -s "$cfg" ] && echo next >>"$cfg"
    printf 'url = "http://127.0.0.1:%s/bench/r%s.git/info/lfs/locks"\ndata = "{\\"path\\":\\"%s\\"}"\nheader = "Content-Type: application/vnd.git-lfs+json"\nheader = "Accept: application/vnd.git-lfs+json"\nuser = "bench:%s"\noutput = /dev/null\nfail\n' \
      "$gport" "$n" "$k" "$gtoken" >>"$cfg"
  done
  curl -s -K "$cfg"
done

# --- lockgate serve: the file store, `lockgate init`'s policy, one
# server per table size, the locks taken by the serve user itself (as
# Gitea's are).
declare -A ltoken lport
for n in $few $many; do
  r=$work/lg$n
  git init -q "$r"
  echo x >"$r/README.md"
  git -C "$r" add -A && git -C "$r" commit -qm init
  (cd "$r" && LOCKGATE_WORKER=admin "$lockgate" init >/dev/null 2>&1)
  sed -i "s/^\(  auto_commit: \)[a-z]*/\1$auto_commit/" "$r/.lockgate.yaml"
  grep -q "^  auto_commit: $auto_commit" "$r/.lockgate.yaml" || { echo "bench-gitea: cannot set workflow.auto_commit" >&2; exit 1; }
  git -C "$r" add -A && git -C "$r" commit -qm lockgate
  ltoken[$n]=$(cd "$r" && LOCKGATE_WORKER=admin "$lockgate" serve user add bench | tail -n 1)
  # shellcheck disable=SC2046 # one key a word
  (cd "$r" && LOCKGATE_WORKER=bench "$lockgate" lock acquire $(keys "$n") >/dev/null 2>&1)
  lport[$n]=$(freeport)
  (cd "$r" && LOCKGATE_WORKER=server exec "$lockgate" serve --listen "127.0.0.1:${lport[$n]}" >"$work/serve$n.log" 2>&1) &
  pids+=($!)
  waitfor "http://127.0.0.1:${lport[$n]}/healthz"
done

# --- The clients: a repository per server and size, whose lfs.url names
# the server with the user's token (as git-lfs reads it).
client() { # DIR URL
  git init -q "$1"
  echo x >"$1/README.md"
  git -C "$1" add -A && git -C "$1" commit -qm init
  git -C "$1" config lfs.url "$2"
}
for n in $few $many; do
  client "$work/c-lg$n" "http://bench:${ltoken[$n]}@127.0.0.1:${lport[$n]}/lfs"
  client "$work/c-gt$n" "http://bench:$gtoken@127.0.0.1:$gport/bench/r$n.git/info/lfs"
done

# The floor: a stub that answers git-lfs's lock, unlock, list and verify
# at once (no lock listed, one lock taken and given back), so that a
# command's time is git-lfs's own.
sport=$(freeport)
python3 - "$sport" >"$work/stub.log" 2>&1 <<'PY' &
import http.server, json, sys
LOCK = {"id": "1", "path": "art/bench.psd", "locked_at": "2026-01-01T00:00:00Z", "owner": {"name": "bench"}}
class H(http.server.BaseHTTPRequestHandler):
    def answer(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/vnd.git-lfs+json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def do_GET(self):
        # git lfs unlock PATH looks its lock up by path first.
        self.answer(200, {"locks": [LOCK] if "path=" in self.path else []})
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path.endswith("/verify"):
            self.answer(200, {"ours": [], "theirs": []})
        else:
            self.answer(201 if self.path.endswith("/locks") else 200, {"lock": LOCK})
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
pids+=($!)
waitfor "http://127.0.0.1:$sport/healthz"
client "$work/c-stub" "http://bench:x@127.0.0.1:$sport/lfs"

# Every table holds its locks, as git-lfs lists them, before timing.
for c in lg$few gt$few lg$many gt$many; do
  got=$(git -C "$work/c-$c" lfs locks | wc -l)
  want=${c#??}
  [ "$got" = "$want" ] || { echo "bench-gitea: $c lists $got locks, want $want" >&2; exit 1; }
done

# ms CMD…: the command's wall time in ms; a failure stops the run.
ms() {
  local s e
  s=$(date +%s%N)
  "$@" >/dev/null 2>&1 || { echo "bench-gitea: failed: $*" >&2; exit 1; }
  e=$(date +%s%N)
  echo $(((e - s) / 1000)) | awk '{printf "%.1f\n", $1/1000}'
}
lockunlock() { git -C "$1" lfs lock art/bench.psd && git -C "$1" lfs unlock art/bench.psd; }
# pair NAME LOCKGATE-CMD GITEA-CMD: one warm-up each, then rounds pairs
# in alternating order; prints a row of the table.
pair() {
  local name=$1 a=$2 b=$3 ta tb i
  local -a as=() bs=() rs=()
  $a >/dev/null 2>&1 && $b >/dev/null 2>&1
  for i in $(seq "$rounds"); do
    if [ $((i % 2)) = 1 ]; then ta=$(ms $a); tb=$(ms $b); else tb=$(ms $b); ta=$(ms $a); fi
    as+=("$ta") bs+=("$tb") rs+=("$(awk -v a="$ta" -v b="$tb" 'BEGIN{printf "%.3f", a/b}')")
  done
  med() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END{print (NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2}'; }
  lo() { printf '%s\n' "$@" | sort -g | head -n 1; }
  hi() { printf '%s\n' "$@" | sort -g | tail -n 1; }
  printf '| %s | %s ms | %s ms | %.2f× (%s–%s) |\n' "$name" "$(med "${as[@]}")" "$(med "${bs[@]}")" \
    "$(med "${rs[@]}")" "$(lo "${rs[@]}")" "$(hi "${rs[@]}")"
}

echo "git-lfs $(git lfs version | cut -d' ' -f1), lockgate workflow.auto_commit: $auto_commit, $rounds rounds a row, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| git-lfs command | lockgate serve p50 | Gitea 1.27.3 p50 | lockgate/Gitea, median of pairs (min–max) |"
echo "|---|---|---|---|"
pair "\`git lfs lock\` + \`git lfs unlock\`, $few locks held" "lockunlock $work/c-lg$few" "lockunlock $work/c-gt$few"
pair "\`git lfs locks\`, $few locks" "git -C $work/c-lg$few lfs locks" "git -C $work/c-gt$few lfs locks"
pair "\`git lfs locks\`, $many locks" "git -C $work/c-lg$many lfs locks" "git -C $work/c-gt$many lfs locks"
pair "\`git lfs locks --verify\`, $few locks" "git -C $work/c-lg$few lfs locks --verify" "git -C $work/c-gt$few lfs locks --verify"
pair "\`git lfs locks --verify\`, $many locks" "git -C $work/c-lg$many lfs locks --verify" "git -C $work/c-gt$many lfs locks --verify"
# The floor: git-lfs alone, against a stub that answers at once, paired
# with Gitea as the servers are: the lowest ratio any server can reach.
pair "floor: \`git lfs lock\` + \`git lfs unlock\` against a stub that answers at once, vs Gitea, $few locks" "lockunlock $work/c-stub" "lockunlock $work/c-gt$few"
pair "floor: \`git lfs locks\` against the stub, vs Gitea, $few locks" "git -C $work/c-stub lfs locks" "git -C $work/c-gt$few lfs locks"
pair "floor: \`git lfs locks --verify\` against the stub, vs Gitea, $few locks" "git -C $work/c-stub lfs locks --verify" "git -C $work/c-gt$few lfs locks --verify"

# lockgate's own share: the server's time per request, from its log.
served() { # LOG PATTERN: the median of the matching requests' times, ms
  grep -E "$2" "$1" | awk '{d=$(NF-1); if (d ~ /µs$/) v=d/1000; else if (d ~ /ms$/) v=d+0; else v=d*1000; print v}' |
    sort -g | awk '{v[NR]=$1} END{if (NR) printf "%.2f ms (%d requests)", (NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2, NR; else printf "none"}'
}
echo
echo "lockgate serve's own time a request (its log), median: lock $(served "$work/serve$few.log" 'POST /lfs/locks 201'), unlock $(served "$work/serve$few.log" 'POST /lfs/locks/[A-Za-z0-9_.-]+/unlock 200'), list of $few $(served "$work/serve$few.log" 'GET /lfs/locks 200'), list of $many $(served "$work/serve$many.log" 'GET /lfs/locks 200'), verify of $many $(served "$work/serve$many.log" 'POST /lfs/locks/verify 200')"
