#!/usr/bin/env bash
# Makes sure Jaeger (all-in-one: an OTLP receiver on :4317/:4318 and its query API on :16686, in-memory
# storage) exists, and prints the folder that holds it, for the test that proves the engine's traces reach a
# real OTLP receiver.
#
# Order: $OPENMCP_JAEGER_ASSETS if it holds jaeger; else the per-machine cache
# (~/.cache/openmcp-engine/jaeger/<version>); else build from the Go module proxy (GOTOOLCHAIN=local).
# The folder appears only when complete. Only the last line of stdout is the folder; progress goes to stderr.
set -euo pipefail
. "$(dirname "$0")/../go-env.sh"
version=${OPENMCP_JAEGER_VERSION:-v1.76.0}

if [ -n "${OPENMCP_JAEGER_ASSETS:-}" ]; then
  [ -x "$OPENMCP_JAEGER_ASSETS/jaeger" ] ||
    { echo "build.sh: $OPENMCP_JAEGER_ASSETS has no jaeger" >&2; exit 1; }
  echo "$OPENMCP_JAEGER_ASSETS"; exit 0
fi
out="${XDG_CACHE_HOME:-$HOME/.cache}/openmcp-engine/jaeger/$version"
[ -x "$out/jaeger" ] && { echo "$out"; exit 0; }
command -v go >/dev/null || { echo "build.sh: no 'go' on PATH; install Go or set OPENMCP_JAEGER_ASSETS" >&2; exit 1; }

mkdir -p "$(dirname "$out")"
# One build per machine at a time (test files may ask together); the second finds the first's result.
exec 9>"$(dirname "$out")/build.lock"
flock 9
[ -x "$out/jaeger" ] && { echo "$out"; exit 0; }
work=$(mktemp -d "$(dirname "$out")/.build-$version.XXXXXX")
trap 'rm -rf "$work"' EXIT
start=$SECONDS
mkdir -p "$work/bin"
(
  cd "$work"
  go mod init openmcp-engine/hack/jaeger
  go get -tool "github.com/jaegertracing/jaeger/cmd/jaeger@$version"
  echo "build.sh: building jaeger $version with $(go version | cut -d' ' -f3) (first time on this machine)" >&2
  go build -ldflags='-s -w' -o "$work/bin/jaeger" github.com/jaegertracing/jaeger/cmd/jaeger
) >&2
chmod -R u+w,go+rX "$work/bin"; rm -rf "$out"; mv "$work/bin" "$out"
echo "build.sh: jaeger $version ready in $((SECONDS - start)) s in $out" >&2
echo "$out"
