#!/usr/bin/env bash
# Makes sure Cluster API's core provider exists as clusterctl installs it, offline: the release's
# core-components.yaml and the manager image it names. Prints `coreComponents=<file>` and `managerImage=<name>`
# on stdout (progress on stderr).
#
# - core-components.yaml is rendered as Cluster API's release does it (`make release-manifests`): kustomize build of
#   core/config/default from the module's source (the one hack/capi/build.sh fetched), after the release's two
#   edits of that folder: the image set to registry.k8s.io/cluster-api/cluster-api-controller:<version> and the
#   pull policy to IfNotPresent. Its clusterctl variables (${CAPI_DIAGNOSTICS_ADDRESS:=:8443}, the feature gates)
#   are left for clusterctl's substitution, and its cert-manager objects for whoever installs it.
# - The image carries the manager hack/capi/build.sh built (`/manager`, as the release image has it) on the
#   Debian base image of hack/containers/ensure.sh (the binary links glibc), under the release image's name, so
#   the manifest runs unchanged once the image is loaded into a kind cluster (`kind load docker-image`).
#
# Usage: hack/capi/core-components.sh   (DOCKER=<docker CLI> to use another than the one on PATH)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/../go-env.sh"
DOCKER=${DOCKER:-docker}
version=${OPENMCP_CAPI_VERSION:-v1.14.2}
image=registry.k8s.io/cluster-api/cluster-api-controller:$version
base_image=openmcp-engine-base:bookworm
# Raised whenever what this script makes changes, so that what an older version made is made again.
revision=1
label=engine.openmcp.cloud/capi-manager-image-revision
out="${XDG_CACHE_HOME:-$HOME/.cache}/openmcp-engine/capi-clusterctl/$version"
components="$out/core-components-r$revision.yaml"

have_image() {
  [ "$("$DOCKER" image inspect -f "{{index .Config.Labels \"$label\"}}" "$image" 2>/dev/null || true)" = "$revision" ]
}
done_already() { have_image && [ -s "$components" ]; }
answer() { echo "coreComponents=$components"; echo "managerImage=$image"; }
done_already && { answer; exit 0; }
# One build per machine at a time (test workers may ask together); the second finds the first's result.
mkdir -p "$out"
exec 9>"$out/.lock"
flock 9
done_already && { answer; exit 0; }

start=$SECONDS
assets=$("$here/build.sh" | tail -n 1)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ ! -s "$components" ]; then
  kustomize=$("$root/hack/kustomize/build.sh" | tail -n 1)
  # The module's source, as build.sh fetched it (a wrapper module, since the manager's API types are a nested module).
  printf 'module openmcp-engine/hack/capi\n\ngo 1.25.0\n' > "$work/go.mod"
  source=$(cd "$work" && go mod download -json "sigs.k8s.io/cluster-api@$version" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  [ -d "$source/core/config/default" ] || { echo "core-components.sh: no core/config/default in $source" >&2; exit 1; }
  cp -r "$source/core/config" "$work/config"
  chmod -R u+w "$work/config"
  # The release's edits (Makefile: set-manifest-image, set-manifest-pull-policy).
  sed -i "s|image: .*|image: $image|" "$work/config/default/manager_image_patch.yaml"
  sed -i "s|imagePullPolicy: .*|imagePullPolicy: IfNotPresent|" "$work/config/default/manager_pull_policy.yaml"
  "$kustomize" build "$work/config/default" > "$work/core-components.yaml"
  grep -q "image: $image" "$work/core-components.yaml" ||
    { echo "core-components.sh: the rendered components do not name $image" >&2; exit 1; }
  mv "$work/core-components.yaml" "$components"
fi

if ! have_image; then
  "$DOCKER" image inspect "$base_image" >/dev/null 2>&1 || "$root/hack/containers/ensure.sh" base-image >/dev/null
  cp "$assets/capi-manager" "$work/manager"
  cat > "$work/Dockerfile" <<DOCKERFILE
FROM $base_image
COPY manager /manager
LABEL $label=$revision
USER 65532:65532
ENTRYPOINT ["/manager"]
DOCKERFILE
  echo "core-components.sh: building $image (revision $revision) from $base_image and the manager of $assets" >&2
  DOCKER_BUILDKIT=0 "$DOCKER" build -q -t "$image" "$work" >&2
  "$DOCKER" run --rm "$image" --help >/dev/null 2>&1 ||
    { echo "core-components.sh: $image does not start its manager" >&2; exit 1; }
  # An older revision of this tag is left dangling: remove it (never an image a container still uses).
  "$DOCKER" image prune -f --filter "label=$label" >/dev/null 2>&1 || true
fi
echo "core-components.sh: Cluster API $version core components and image ready in $((SECONDS - start)) s" >&2
answer
