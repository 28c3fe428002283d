#!/usr/bin/env bash
# Makes sure Cluster API's core manager (the controllers of cluster.x-k8s.io) and its CRDs exist, and prints the
# folder that holds them (`capi-manager` and `crds/`), for the tests and the demo that prove the engine as an
# infrastructure provider against Cluster API's own controllers.
#
# Order: $OPENMCP_CAPI_ASSETS if it holds capi-manager and crds/; else the per-machine cache
# (~/.cache/openmcp-engine/capi/<version>); else build from the Go module proxy (GOTOOLCHAIN=local, ~2 min).
# From v1.14 the manager's main package is sigs.k8s.io/cluster-api/core and its API types live in the nested
# module sigs.k8s.io/cluster-api/api, which upstream wires with `replace => ./api`; a wrapper module replaces it
# with the published version instead. Only the last line of stdout is the folder.
set -euo pipefail
. "$(dirname "$0")/../go-env.sh"
version=${OPENMCP_CAPI_VERSION:-v1.14.2}

if [ -n "${OPENMCP_CAPI_ASSETS:-}" ]; then
  [ -x "$OPENMCP_CAPI_ASSETS/capi-manager" ] && [ -d "$OPENMCP_CAPI_ASSETS/crds" ] ||
    { echo "build.sh: $OPENMCP_CAPI_ASSETS has no capi-manager and crds/" >&2; exit 1; }
  echo "$OPENMCP_CAPI_ASSETS"; exit 0
fi
out="${XDG_CACHE_HOME:-$HOME/.cache}/openmcp-engine/capi/$version"
[ -x "$out/capi-manager" ] && [ -f "$out/crds/cluster.x-k8s.io_clusters.yaml" ] && { echo "$out"; exit 0; }
command -v go >/dev/null || { echo "build.sh: no 'go' on PATH; install Go or set OPENMCP_CAPI_ASSETS" >&2; exit 1; }

mkdir -p "$(dirname "$out")"
# One build per machine at a time (test files may ask together); the second finds the first's result.
exec 9>"$(dirname "$out")/build.lock"
flock 9
[ -x "$out/capi-manager" ] && [ -f "$out/crds/cluster.x-k8s.io_clusters.yaml" ] && { echo "$out"; exit 0; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'module openmcp-engine/hack/capi\n\ngo 1.25.0\n\nreplace sigs.k8s.io/cluster-api/api => sigs.k8s.io/cluster-api/api %s\n' "$version" > "$work/go.mod"
printf '//go:build tools\n\npackage tools\n\nimport _ "sigs.k8s.io/cluster-api/core"\n' > "$work/tools.go"
start=$SECONDS
mkdir -p "$work/bin/crds"
(
  cd "$work"
  go get "sigs.k8s.io/cluster-api@$version" "sigs.k8s.io/cluster-api/api@$version"
  if [ -x "$out/capi-manager" ]; then
    cp "$out/capi-manager" "$work/bin/"
  else
    echo "build.sh: building Cluster API $version core manager with $(go version | cut -d' ' -f3) (first time on this machine)" >&2
    go build -ldflags='-s -w' -o "$work/bin/capi-manager" sigs.k8s.io/cluster-api/core
  fi
  source=$(go list -m -f '{{.Dir}}' "sigs.k8s.io/cluster-api")
  cp "$source"/core/config/crd/bases/*.yaml "$work/bin/crds/"
) >&2
chmod -R u+w,go+rX "$work/bin"; rm -rf "$out"; mv "$work/bin" "$out"
echo "build.sh: Cluster API $version ready in $((SECONDS - start)) s in $out" >&2
echo "$out"
