#!/usr/bin/env bash
# Makes sure a kustomize binary exists, for the tests that render deploy/ the way `kubectl apply -k` does, and
# prints its path.
#
# Order: $OPENMCP_KUSTOMIZE (a kustomize binary) if set; else the per-machine cache
# (~/.cache/openmcp-engine/kustomize/<version>/kustomize); else build it from the Go module proxy
# (GOTOOLCHAIN=local, about a minute the first time). Only the last line of stdout is the path.
set -euo pipefail
. "$(dirname "$0")/../go-env.sh"
# The newest release that builds with Go 1.26 (v5.8.3 needs Go 1.27).
version=${OPENMCP_KUSTOMIZE_VERSION:-v5.8.2}

if [ -n "${OPENMCP_KUSTOMIZE:-}" ]; then
  [ -x "$OPENMCP_KUSTOMIZE" ] || { echo "build.sh: OPENMCP_KUSTOMIZE=$OPENMCP_KUSTOMIZE is not executable" >&2; exit 1; }
  echo "$OPENMCP_KUSTOMIZE"; exit 0
fi
out="${XDG_CACHE_HOME:-$HOME/.cache}/openmcp-engine/kustomize/$version"
[ -x "$out/kustomize" ] && { echo "$out/kustomize"; exit 0; }
command -v go >/dev/null || { echo "build.sh: no 'go' on PATH; install Go or set OPENMCP_KUSTOMIZE" >&2; exit 1; }

mkdir -p "$(dirname "$out")"
# One build per machine at a time (test files may ask together); the second finds the first's result.
exec 9>"$(dirname "$out")/build.lock"
flock 9
[ -x "$out/kustomize" ] && { echo "$out/kustomize"; exit 0; }
work=$(mktemp -d "$(dirname "$out")/.build-$version.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "build.sh: building kustomize $version with $(go version | cut -d' ' -f3) (first time on this machine)" >&2
start=$SECONDS
GOBIN="$work" go install -ldflags='-s -w' "sigs.k8s.io/kustomize/kustomize/v5@$version" >&2
chmod 755 "$work"; rm -rf "$out"; mv "$work" "$out"
echo "build.sh: kustomize $version ready in $((SECONDS - start)) s in $out" >&2
echo "$out/kustomize"
