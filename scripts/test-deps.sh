#!/usr/bin/env bash
# Makes sure the real programs lockgate's tests drive are installed, with
# apt-get when it can, and fails with a clear message when it cannot.
set -euo pipefail

# The linter is a Go program: installed with `go install` (through the Go
# module proxy), pinned so every machine lints alike.
GOLANGCI_LINT_VERSION=v2.15.0
gobin="$(go env GOPATH)/bin"
if ! PATH="$gobin:$PATH" golangci-lint version 2>/dev/null | grep -q "version ${GOLANGCI_LINT_VERSION#v} "; then
  echo "test-deps: installing golangci-lint $GOLANGCI_LINT_VERSION (go install; takes a few minutes once)" >&2
  if ! GOFLAGS= go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$GOLANGCI_LINT_VERSION" >&2; then
    echo "test-deps: could not install golangci-lint with go install (is the Go module proxy reachable?); install $GOLANGCI_LINT_VERSION and rerun make test" >&2
    exit 1
  fi
fi

need=()
command -v git >/dev/null 2>&1 || need+=(git)
command -v pre-commit >/dev/null 2>&1 || need+=(pre-commit)
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v redis-benchmark >/dev/null 2>&1 || need+=(redis-tools)
command -v tmux >/dev/null 2>&1 || need+=(tmux)
command -v ssh-keygen >/dev/null 2>&1 || need+=(openssh-client)
command -v git-lfs >/dev/null 2>&1 || need+=(git-lfs)
# The web board's tests drive a real headless browser (internal/browsertest).
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || need+=(chromium)

if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi

echo "test-deps: installing ${need[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo -n"; fi
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "test-deps: missing ${need[*]} and no apt-get to install them; install them and rerun make test" >&2
  exit 1
fi
if ! { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}"; } >&2; then
  echo "test-deps: could not install ${need[*]} with apt-get (need root or sudo); install them and rerun make test" >&2
  exit 1
fi
for p in git pre-commit redis-server tmux git-lfs ssh-keygen; do
  command -v "$p" >/dev/null 2>&1 || { echo "test-deps: $p still missing after apt-get" >&2; exit 1; }
done
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || { echo "test-deps: chromium still missing after apt-get" >&2; exit 1; }
# Debian starts the packaged service; tests start their own servers.
if command -v service >/dev/null 2>&1; then $sudo service redis-server stop >/dev/null 2>&1 || true; fi
