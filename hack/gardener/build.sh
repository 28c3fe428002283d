#!/usr/bin/env bash
# Makes sure Gardener's own API server (gardener-apiserver: core.gardener.cloud, security.gardener.cloud, ...,
# with Gardener's validation, admission plugins and the Shoot's adminkubeconfig subresource) exists, and prints
# the folder that holds it, for the tests that prove the `gardener` backend against the real thing.
#
# Order: $OPENMCP_GARDENER_ASSETS if it holds gardener-apiserver; else the per-machine cache
# (~/.cache/openmcp-engine/gardener/<version>); else build from the Go module proxy (GOTOOLCHAIN=local; the
# first build took 22 min on a busy 2-core machine, module downloads included).
# Gardener wires its API types' nested module with `replace github.com/gardener/gardener/pkg/apis => ./pkg/apis`,
# which a dependency's go.mod cannot carry: the wrapper module replaces it with the published pkg/apis of the
# same tag, and repeats upstream's `exclude`s so the module graph is the one Gardener builds with.
# The folder appears only when complete. Only the last line of stdout is the folder; progress goes to stderr.
set -euo pipefail
. "$(dirname "$0")/../go-env.sh"
version=${OPENMCP_GARDENER_VERSION:-v1.150.0}

if [ -n "${OPENMCP_GARDENER_ASSETS:-}" ]; then
  [ -x "$OPENMCP_GARDENER_ASSETS/gardener-apiserver" ] ||
    { echo "build.sh: $OPENMCP_GARDENER_ASSETS has no gardener-apiserver" >&2; exit 1; }
  echo "$OPENMCP_GARDENER_ASSETS"; exit 0
fi
out="${XDG_CACHE_HOME:-$HOME/.cache}/openmcp-engine/gardener/$version"
[ -x "$out/gardener-apiserver" ] && { echo "$out"; exit 0; }
command -v go >/dev/null || { echo "build.sh: no 'go' on PATH; install Go or set OPENMCP_GARDENER_ASSETS" >&2; exit 1; }

mkdir -p "$(dirname "$out")"
# One build per machine at a time (test files may ask together); the second finds the first's result.
exec 9>"$(dirname "$out")/build.lock"
flock 9
[ -x "$out/gardener-apiserver" ] && { echo "$out"; exit 0; }
work=$(mktemp -d "$(dirname "$out")/.build-$version.XXXXXX")
trap 'rm -rf "$work"' EXIT
cat > "$work/go.mod" <<MOD
module openmcp-engine/hack/gardener

go 1.26.0

replace github.com/gardener/gardener/pkg/apis => github.com/gardener/gardener/pkg/apis $version

exclude (
	github.com/gardener/cert-management v0.22.0
	github.com/gardener/cert-management v0.23.0
	github.com/gardener/gardener/pkg/apis v1.143.0
	github.com/gardener/gardener/pkg/apis v1.147.1
)
MOD
printf '//go:build tools\n\npackage tools\n\nimport _ "github.com/gardener/gardener/cmd/gardener-apiserver"\n' > "$work/tools.go"
start=$SECONDS
mkdir -p "$work/bin"
(
  cd "$work"
  go get "github.com/gardener/gardener@$version" "github.com/gardener/gardener/pkg/apis@$version"
  echo "build.sh: building gardener-apiserver $version with $(go version | cut -d' ' -f3) (first time on this machine)" >&2
  # Unstamped (its /version says v0.0.0-master): Gardener's release build stamps k8s.io/component-base/version
  # with Gardener's own version, which the API server libraries would read as a Kubernetes version.
  go build -ldflags='-s -w' -o "$work/bin/gardener-apiserver" github.com/gardener/gardener/cmd/gardener-apiserver
) >&2
chmod -R u+w,go+rX "$work/bin"; rm -rf "$out"; mv "$work/bin" "$out"
echo "build.sh: gardener-apiserver $version ready in $((SECONDS - start)) s in $out" >&2
echo "$out"
