#!/usr/bin/env bash
# Makes sure MetalLB (L2 mode, what openMCP's kind provider installs so that LoadBalancer Services work on kind)
# exists for the kind backend's `metallb` option, built with no image registry: the controller and speaker
# from the Go module proxy (module go.universe.tf/metallb), their images FROM the local Debian base image
# (hack/containers/ensure.sh base-image), tagged as the release's manifest names them (quay.io/metallb/…), so
# the manifest applies unchanged and a kind node finds them loaded (`kind load docker-image`) instead of
# pulling. The controller's image also carries the release's manifest (/metallb-native.yaml, from the module
# zip), so the kind backend needs nothing but the Docker engine, from the host or from a Pod. Prints the cache
# folder on the last line of stdout (progress on stderr): the binaries, metallb-native.yaml, images (the names).
#
# Version: v0.15.2. The newest release the proxy lists, v0.16.2, needs github.com/metallb/frr-k8s v0.0.27,
# which the proxy refuses (403 "This module version is not available"); v0.15.2 needs frr-k8s v0.0.20,
# which it serves.
#
# Order: the per-machine cache (~/.cache/openmcp-engine/metallb/<version>) when complete and both images are
# in the Docker engine; else build what is missing (binaries 5-20 min the first time on two cores, images seconds).
# Usage: hack/metallb/build.sh   (DOCKER=<docker CLI> to use another than the one on PATH)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/../go-env.sh"
export CGO_ENABLED=0
DOCKER=${DOCKER:-docker}
version=${OPENMCP_METALLB_VERSION:-v0.15.2}
module=go.universe.tf/metallb
base_image=openmcp-engine-base:bookworm
out="${XDG_CACHE_HOME:-$HOME/.cache}/openmcp-engine/metallb/$version"
images=("quay.io/metallb/controller:$version" "quay.io/metallb/speaker:$version")
# Raised whenever what this script builds into the images changes, so an image an older revision built is rebuilt.
revision=2
label=engine.openmcp.cloud/metallb-revision

log() { echo "build.sh: $*" >&2; }
have_image() {
  [ "$("$DOCKER" image inspect -f "{{index .Config.Labels \"$label\"}}" "$1" 2>/dev/null || true)" = "$revision" ]
}
ready() {
  [ -x "$out/bin/controller" ] && [ -x "$out/bin/speaker" ] && [ -s "$out/metallb-native.yaml" ] &&
    have_image "${images[0]}" && have_image "${images[1]}"
}
ready && { echo "$out"; exit 0; }

# One build per machine at a time (heavy test workers may ask together); the second finds the first's result.
mkdir -p "$(dirname "$out")"
exec 9>"$(dirname "$out")/build.lock"
flock 9
ready && { echo "$out"; exit 0; }
start=$SECONDS
work=$(mktemp -d "$(dirname "$out")/.build-$version.XXXXXX")
trap 'rm -rf "$work"' EXIT

if [ -x "$out/bin/controller" ] && [ -x "$out/bin/speaker" ] && [ -s "$out/metallb-native.yaml" ]; then
  cp -a "$out/." "$work/"
else
  command -v go >/dev/null || { log "no 'go' on PATH; install Go"; exit 1; }
  log "building MetalLB $version controller and speaker with $(go version | cut -d' ' -f3) (first time on this machine)"
  source=$(cd "$work" && go mod download -json "$module@$version" | awk -F'"' '$2 == "Dir" { print $4 }')
  [ -d "$source/config/manifests" ] || { log "the module zip of $module@$version has no config/manifests"; exit 1; }
  # Built inside a writable copy of the module, so its own go.mod and go.sum pin every dependency.
  cp -r "$source" "$work/src"
  chmod -R u+w "$work/src"
  flags="-s -w -X '$module/internal/version.gitBranch=$version'"
  (
    cd "$work/src"
    go build -ldflags="$flags" -o "$work/bin/controller" ./controller
    go build -ldflags="$flags" -o "$work/bin/speaker" ./speaker
  ) >&2
  cp "$source/config/manifests/metallb-native.yaml" "$work/metallb-native.yaml"
  cp "$source/LICENSE" "$work/LICENSE"
  rm -rf "$work/src"
fi
printf '%s\n' "${images[@]}" > "$work/images"

"$DOCKER" image inspect "$base_image" >/dev/null 2>&1 || "$root/hack/containers/ensure.sh" base-image >/dev/null
# The two images as upstream's Dockerfiles make them (one static binary as the entrypoint), on the Debian base
# in place of distroless. Each is built from a context holding only its binary.
for component in controller speaker; do
  ctx="$work/image-$component"
  mkdir -p "$ctx"
  cp "$work/bin/$component" "$work/LICENSE" "$work/metallb-native.yaml" "$ctx/"
  cat > "$ctx/Dockerfile" <<DOCKERFILE
FROM $base_image
COPY $component /$component
COPY LICENSE /
$([ "$component" = controller ] && echo "COPY metallb-native.yaml /metallb-native.yaml")
LABEL $label=$revision
ENTRYPOINT ["/$component"]
DOCKERFILE
  DOCKER_BUILDKIT=0 "$DOCKER" build -q -t "quay.io/metallb/$component:$version" "$ctx" >&2
  rm -rf "$ctx"
done
# An older revision of these tags is left dangling: remove it (never an image a container still uses).
"$DOCKER" image prune -f --filter "label=$label" >/dev/null 2>&1 || true

chmod -R u+w,go+rX "$work"
rm -rf "$out"
mv "$work" "$out"
trap - EXIT
log "MetalLB $version ready in $((SECONDS - start)) s in $out (images ${images[*]})"
echo "$out"
