#!/usr/bin/env bash
# Makes sure versitygw (the Versity S3 Gateway, Apache-2.0: an S3-compatible server over a plain folder) exists,
# and prints the folder that holds it, for the tests that prove the S3 snapshot store against a real S3 server.
#
# Order: $OPENMCP_S3_ASSETS if it holds versitygw; else the per-machine cache
# (~/.cache/openmcp-engine/s3/versitygw-<version>); else build from the Go module proxy (GOTOOLCHAIN=local;
# a few minutes the first time). The folder appears only when complete. Only the last line of stdout is the
# folder; progress goes to stderr.
set -euo pipefail
. "$(dirname "$0")/../go-env.sh"
version=${OPENMCP_VERSITYGW_VERSION:-v1.8.0}

if [ -n "${OPENMCP_S3_ASSETS:-}" ]; then
  [ -x "$OPENMCP_S3_ASSETS/versitygw" ] ||
    { echo "build.sh: $OPENMCP_S3_ASSETS has no versitygw" >&2; exit 1; }
  echo "$OPENMCP_S3_ASSETS"; exit 0
fi
out="${XDG_CACHE_HOME:-$HOME/.cache}/openmcp-engine/s3/versitygw-$version"
[ -x "$out/versitygw" ] && { echo "$out"; exit 0; }
command -v go >/dev/null || { echo "build.sh: no 'go' on PATH; install Go or set OPENMCP_S3_ASSETS" >&2; exit 1; }

mkdir -p "$(dirname "$out")"
# One build per machine at a time (test files may ask together); the second finds the first's result.
exec 9>"$(dirname "$out")/build.lock"
flock 9
[ -x "$out/versitygw" ] && { echo "$out"; exit 0; }
work=$(mktemp -d "$(dirname "$out")/.build-$version.XXXXXX")
trap 'rm -rf "$work"' EXIT
start=$SECONDS
mkdir -p "$work/bin"
echo "build.sh: building versitygw $version with $(go version | cut -d' ' -f3) (first time on this machine)" >&2
GOBIN="$work/bin" go install -ldflags='-s -w' "github.com/versity/versitygw/cmd/versitygw@$version" >&2
chmod -R u+w,go+rX "$work/bin"; rm -rf "$out"; mv "$work/bin" "$out"
echo "build.sh: versitygw $version ready in $((SECONDS - start)) s in $out" >&2
echo "$out"
