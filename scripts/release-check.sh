#!/usr/bin/env bash
# Checks a goreleaser snapshot in DIR: one archive per platform, each
# holding a static lockgate and lockgate-hook for it, checksums that match,
# and the binaries of this machine's platform answering their version.
set -euo pipefail
dir=${1:-dist}
cd "$dir"
sha256sum -c checksums.txt
want=(linux_amd64 linux_arm64 darwin_amd64 darwin_arm64)
for p in "${want[@]}"; do
  a=$(ls lockgate_*_"$p".tar.gz)
  tmp=$(mktemp -d)
  tar -xzf "$a" -C "$tmp"
  for bin in lockgate lockgate-hook; do
    info=$(file "$tmp/$bin")
    case "$p" in
      linux_amd64) echo "$info" | grep -q 'ELF 64-bit.*x86-64.*statically linked' ;;
      linux_arm64) echo "$info" | grep -q 'ELF 64-bit.*aarch64.*statically linked' ;;
      darwin_amd64) echo "$info" | grep -q 'Mach-O 64-bit.*x86_64' ;;
      darwin_arm64) echo "$info" | grep -q 'Mach-O 64-bit.*arm64' ;;
    esac || { echo "release-check: $a: $bin: $info" >&2; exit 1; }
    if [ "$p" = "$(go env GOOS)_$(go env GOARCH)" ]; then
      "$tmp/$bin" --version | grep -q "^$bin "
    fi
  done
  rm -rf "$tmp"
  echo "ok $a"
done
