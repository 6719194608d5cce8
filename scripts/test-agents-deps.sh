#!/usr/bin/env bash
# Installs the real coding-agent CLIs that the agent tests drive
# (internal/agenttest, `go test -tags agents ./internal/agenttest/`), pinned,
# with npm, into a cache OUTSIDE the repository:
#
#   ${LOCKGATE_AGENTS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/lockgate/agents}/<name>@<version>
#
# one `npm install --prefix DIR/<name>@<version>` per harness, skipped when
# that directory already holds the binary. internal/agenttest looks the
# binaries up at the same place (DIR/<name>@<version>/node_modules/.bin).
# Prints the bin directories, one a line, on stdout.
#
# Each npm package ships its native binary in a platform package
# (optionalDependencies), so nothing is downloaded from outside the npm
# registry. Installed sizes are a few hundred MB per harness.
#
# opencode offline: at every start opencode 1.18 checks each config dir
# it uses (.opencode/ of the project, $XDG_CONFIG_HOME/opencode) and, unless
# the dir has node_modules and a package-lock.json whose root package lists
# every dependency of its package.json and `@opencode-ai/plugin`, runs its
# bundled npm (Arborist) there to install `@opencode-ai/plugin` — from the
# registry (20-30 s of each run here), which an offline machine lacks. So this
# script also installs `@opencode-ai/plugin` (same version as opencode) into
# DIR/opencode-plugin@<version>, and agenttest.Run, before opencode starts,
# symlinks that node_modules into each such dir that has none and copies
# this install's package.json and package-lock.json beside it: the check
# passes and nothing is fetched. Run also sets npm_config_offline=true for
# opencode, so anything still missing fails at once instead of fetching.
# (The test's plugin imports only node: modules.)
#
# Usage: scripts/test-agents-deps.sh            install what is missing
#        LOCKGATE_AGENTS_DIR=/somewhere scripts/test-agents-deps.sh
set -euo pipefail

# Pinned: the versions current on the npm registry on the day they were
# checked (2026-12-06) and run against internal/fakemodel by
# `go test -tags agents ./internal/agenttest/`. internal/agenttest's
# Packages names the same versions (TestPinsMatchScript holds them together).
# Claude Code declares node >= 22 but ships a native binary in its
# platform package: npm only warns (EBADENGINE) on node 20 and it runs.
CLAUDE_VERSION=2.1.332
CODEX_VERSION=0.171.0
GEMINI_VERSION=0.61.0
OPENCODE_VERSION=1.18.33
COPILOT_VERSION=1.0.102

dir=${LOCKGATE_AGENTS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/lockgate/agents}

if ! command -v npm >/dev/null 2>&1; then
  echo "test-agents-deps: npm not found; install Node.js (>= 20) with npm and rerun scripts/test-agents-deps.sh" >&2
  exit 1
fi

# The cache must not be inside this repository (harness installs are
# hundreds of MB and would show up in git status).
repo=$(cd "$(dirname "$0")/.." && pwd -P)
absdir=$(realpath -m "$dir")
case "$absdir/" in
  "$repo"/*)
    echo "test-agents-deps: $absdir is inside the repository; set LOCKGATE_AGENTS_DIR to a directory outside it" >&2
    exit 1
    ;;
esac
mkdir -p "$absdir"

# install NAME VERSION BIN: npm install NAME@VERSION into $absdir/NAME@VERSION
# unless node_modules/.bin/BIN is already there.
install() {
  local name=$1 version=$2 bin=$3
  local prefix="$absdir/$name@$version"
  if [ -n "$bin" ] && [ -x "$prefix/node_modules/.bin/$bin" ]; then
    echo "$prefix/node_modules/.bin"
    return
  fi
  if [ -z "$bin" ] && [ -f "$prefix/node_modules/$name/package.json" ]; then
    return
  fi
  echo "test-agents-deps: installing $name@$version into $prefix" >&2
  mkdir -p "$prefix"
  if ! npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error \
    "$name@$version" >&2; then
    echo "test-agents-deps: npm install $name@$version failed (is the npm registry reachable?)" >&2
    exit 1
  fi
  if [ -n "$bin" ]; then
    if [ ! -x "$prefix/node_modules/.bin/$bin" ]; then
      echo "test-agents-deps: $name@$version installed but $prefix/node_modules/.bin/$bin is missing" >&2
      exit 1
    fi
    echo "$prefix/node_modules/.bin"
  fi
}

install @anthropic-ai/claude-code "$CLAUDE_VERSION" claude
install @openai/codex "$CODEX_VERSION" codex
install @google/gemini-cli "$GEMINI_VERSION" gemini
install opencode-ai "$OPENCODE_VERSION" opencode
install @github/copilot "$COPILOT_VERSION" copilot
# For opencode's first start offline (see above); no binary.
plugin_prefix="$absdir/opencode-plugin@$OPENCODE_VERSION"
if [ ! -f "$plugin_prefix/node_modules/@opencode-ai/plugin/package.json" ]; then
  echo "test-agents-deps: installing @opencode-ai/plugin@$OPENCODE_VERSION into $plugin_prefix" >&2
  mkdir -p "$plugin_prefix"
  if ! npm install --prefix "$plugin_prefix" --no-audit --no-fund --loglevel=error \
    "@opencode-ai/plugin@$OPENCODE_VERSION" >&2; then
    echo "test-agents-deps: npm install @opencode-ai/plugin@$OPENCODE_VERSION failed (is the npm registry reachable?)" >&2
    exit 1
  fi
fi
