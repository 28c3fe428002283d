#!/usr/bin/env bash
# Makes sure Cluster API's core manager (the controllers of cluster.x-k8s.io) exists, and prints the
# folder that holds it, for tests that prove the engine as an infrastructure provider against Cluster
# API's own controllers. Not used by `npm test` yet (the infrastructure-provider issue will).
#
# Order: $OPENMCP_CAPI_ASSETS if it holds capi-manager; else the per-machine cache
# (~/.cache/openmcp-engine/capi/<version>); else build from the Go module proxy (GOTOOLCHAIN=local).
# Why v1.13: from v1.14 the core manager needs the nested module sigs.k8s.io/cluster-api/api, which is
# not published on the module proxy (v1.14 wires it with `replace => ./api`); v1.13 serves v1beta2 and
# keeps its main package at the module root. Only the last line of stdout is the folder.
set -euo pipefail
export GOTOOLCHAIN=local GOFLAGS=-mod=mod
version=${OPENMCP_CAPI_VERSION:-v1.13.6}

if [ -n "${OPENMCP_CAPI_ASSETS:-}" ]; then
  [ -x "$OPENMCP_CAPI_ASSETS/capi-manager" ] || { echo "build.sh: $OPENMCP_CAPI_ASSETS has no capi-manager" >&2; exit 1; }
  echo "$OPENMCP_CAPI_ASSETS"; exit 0
fi
command -v go >/dev/null || { echo "build.sh: no 'go' on PATH; install Go or set OPENMCP_CAPI_ASSETS" >&2; exit 1; }

out="${XDG_CACHE_HOME:-$HOME/.cache}/openmcp-engine/capi/$version"
[ -x "$out/capi-manager" ] && { echo "$out"; exit 0; }
mkdir -p "$(dirname "$out")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'module openmcp-engine/hack/capi\n\ngo 1.25.0\n' > "$work/go.mod"
printf '//go:build tools\n\npackage tools\n\nimport _ "sigs.k8s.io/cluster-api"\n' > "$work/tools.go"
echo "build.sh: building Cluster API $version core manager with $(go version | cut -d' ' -f3) (first time on this machine)" >&2
start=$SECONDS
(cd "$work" && go get "sigs.k8s.io/cluster-api@$version" && go build -trimpath -ldflags='-s -w' -o "$work/bin/capi-manager" sigs.k8s.io/cluster-api) >&2
chmod 755 "$work/bin"; rm -rf "$out"; mv "$work/bin" "$out"
echo "build.sh: built in $((SECONDS - start)) s into $out" >&2
echo "$out"
