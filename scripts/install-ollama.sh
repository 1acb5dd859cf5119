#!/usr/bin/env bash
# Builds Ollama v0.6.5 from the Go module proxy into aimeter's cache and prints
# the binary's path on stdout (everything else goes to stderr).
#
# Ollama is the real third-party OpenAI-compatible server of aimeter's
# end-to-end tests (internal/ollamatest). Later Ollama versions do not build
# from the module proxy: their module zips lack llama.cpp's vendor/ folder.
#
# Idempotent: when the binary is already there and `--version` says 0.6.5, it
# prints the path and builds nothing. Installs g++ with apt-get when missing.
#
# Environment:
#   AIMETER_CACHE  cache folder (default $HOME/.cache/aimeter); the binary
#                  goes to $AIMETER_CACHE/bin/ollama-v0.6.5.
set -euo pipefail

version=0.6.5
cache="${AIMETER_CACHE:-${HOME:?neither AIMETER_CACHE nor HOME is set}/.cache/aimeter}"
bin="$cache/bin/ollama-v$version"

have_version() {
  # `ollama --version` without a server prints a warning and
  # "client version is 0.6.5"; match the version number alone.
  "$1" --version 2>&1 | grep -q "version is $version\$"
}

if [ -x "$bin" ] && have_version "$bin"; then
  echo "$bin"
  exit 0
fi

export PATH="/usr/local/go/bin:$PATH"
command -v go >/dev/null || { echo "install-ollama: go is not on PATH" >&2; exit 1; }
if ! command -v g++ >/dev/null; then
  echo "install-ollama: installing g++ with apt-get" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2 && apt-get install -y -qq --no-install-recommends g++ >&2
fi

mkdir -p "$cache/bin"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "install-ollama: building github.com/ollama/ollama@v$version (about 1-3 minutes on 2 cores)" >&2
# -march=x86-64-v3: without it ggml-cpu is built for baseline x86-64 and
# prefill is about 6 times slower; v3 (AVX2) rather than native keeps the
# binary portable across the machines that share the cache.
# GOFLAGS is cleared so a caller's -mod=vendor or similar cannot break the
# out-of-module install; the build runs outside any module folder.
(
  cd "$work"
  export GOFLAGS= GOBIN="$work/bin" CGO_ENABLED=1
  export CGO_CFLAGS="-O3 -march=x86-64-v3" CGO_CXXFLAGS="-O3 -march=x86-64-v3"
  # Ollama's release builds stamp the version with -X; without it the
  # binary reports 0.0.0.
  go install -ldflags "-X github.com/ollama/ollama/version.Version=$version" \
    "github.com/ollama/ollama@v$version" 2> "$work/build.log" || {
    echo "install-ollama: go install failed; last lines of its output:" >&2
    tail -n 30 "$work/build.log" >&2
    exit 1
  }
)
# Rename into place so a concurrent or interrupted run never leaves a partial
# binary at the final path.
cp "$work/bin/ollama" "$bin.tmp.$$"
mv -f "$bin.tmp.$$" "$bin"
if ! have_version "$bin"; then
  echo "install-ollama: $bin does not report version $version:" >&2
  "$bin" --version >&2 || true
  exit 1
fi
echo "$bin"
