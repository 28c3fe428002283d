#!/usr/bin/env bash
# Makes sure Cluster API's kubeadm control-plane manager, kubeadm bootstrap manager and Docker infrastructure
# provider (CAPD) exist with their CRDs, and prints the folder that holds them, for the tests that prove the
# `capi` backend with Cluster API's own controllers and real Docker machines:
#   kubeadm-control-plane-manager, kubeadm-bootstrap-manager, docker-infrastructure-manager,
#   crds/kubeadm-control-plane/, crds/kubeadm-bootstrap/, crds/docker/ (CAPD's Docker* and Dev* kinds)
#
# Order: $OPENMCP_CAPI_PROVIDERS_ASSETS if it holds the three managers; else the per-machine cache
# (~/.cache/openmcp-engine/capi-providers/<version>); else build from the Go module proxy (GOTOOLCHAIN=local).
# The kubeadm managers live in sigs.k8s.io/cluster-api (controlplane/kubeadm, bootstrap/kubeadm); CAPD lives in
# the module sigs.k8s.io/cluster-api/test (infrastructure/docker). Both modules wire their siblings with
# `replace => ../`, which a dependency's go.mod cannot do; a wrapper module replaces them with the published
# versions instead. A manager already in the cache is kept (only missing ones are built; timings on stderr).
# Only the last line of stdout is the folder.
set -euo pipefail
. "$(dirname "$0")/../go-env.sh"
version=${OPENMCP_CAPI_VERSION:-v1.14.2}
managers=(kubeadm-control-plane-manager kubeadm-bootstrap-manager docker-infrastructure-manager)

complete() {
  local folder=$1 name
  for name in "${managers[@]}"; do [ -x "$folder/$name" ] || return 1; done
  [ -f "$folder/crds/docker/infrastructure.cluster.x-k8s.io_dockerclusters.yaml" ] &&
    [ -f "$folder/crds/docker/infrastructure.cluster.x-k8s.io_devclusters.yaml" ] &&
    grep -q "cluster.x-k8s.io/v1beta2: v1beta2" "$folder/crds/docker/infrastructure.cluster.x-k8s.io_dockerclusters.yaml" &&
    [ -f "$folder/crds/kubeadm-control-plane/controlplane.cluster.x-k8s.io_kubeadmcontrolplanes.yaml" ] &&
    [ -f "$folder/crds/kubeadm-bootstrap/bootstrap.cluster.x-k8s.io_kubeadmconfigs.yaml" ]
}

if [ -n "${OPENMCP_CAPI_PROVIDERS_ASSETS:-}" ]; then
  complete "$OPENMCP_CAPI_PROVIDERS_ASSETS" ||
    { echo "build-providers.sh: $OPENMCP_CAPI_PROVIDERS_ASSETS lacks a manager or crds/" >&2; exit 1; }
  echo "$OPENMCP_CAPI_PROVIDERS_ASSETS"; exit 0
fi
out="${XDG_CACHE_HOME:-$HOME/.cache}/openmcp-engine/capi-providers/$version"
complete "$out" && { echo "$out"; exit 0; }
command -v go >/dev/null || { echo "build-providers.sh: no 'go' on PATH; install Go or set OPENMCP_CAPI_PROVIDERS_ASSETS" >&2; exit 1; }

mkdir -p "$(dirname "$out")"
# One build per machine at a time (test workers may ask together); the second finds the first's result.
exec 9>"$(dirname "$out")/.build-$version.lock"
flock 9
complete "$out" && { echo "$out"; exit 0; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/go.mod" <<EOF
module openmcp-engine/hack/capi-providers

go 1.26.0

replace (
	sigs.k8s.io/cluster-api => sigs.k8s.io/cluster-api $version
	sigs.k8s.io/cluster-api/api => sigs.k8s.io/cluster-api/api $version
)
EOF
cat > "$work/tools.go" <<'EOF'
//go:build tools

package tools

import (
	_ "sigs.k8s.io/cluster-api/bootstrap/kubeadm"
	_ "sigs.k8s.io/cluster-api/controlplane/kubeadm"
	_ "sigs.k8s.io/cluster-api/test/infrastructure/docker"
)
EOF
start=$SECONDS
mkdir -p "$work/bin/crds/kubeadm-control-plane" "$work/bin/crds/kubeadm-bootstrap" "$work/bin/crds/docker"
(
  cd "$work"
  go get "sigs.k8s.io/cluster-api@$version" "sigs.k8s.io/cluster-api/api@$version" "sigs.k8s.io/cluster-api/test@$version"
  # The test module's own requirements (kind, moby, ...) decide the versions, as upstream builds CAPD.
  go mod tidy -e >/dev/null 2>&1 || true
  build() { # name package
    if [ -x "$out/$1" ]; then cp "$out/$1" "$work/bin/"; return; fi
    local began=$SECONDS
    echo "build-providers.sh: building $1 ($2 $version) with $(go version | cut -d' ' -f3)" >&2
    go build -ldflags='-s -w' -o "$work/bin/$1" "$2"
    echo "build-providers.sh: $1 built in $((SECONDS - began)) s" >&2
  }
  build kubeadm-bootstrap-manager sigs.k8s.io/cluster-api/bootstrap/kubeadm
  build kubeadm-control-plane-manager sigs.k8s.io/cluster-api/controlplane/kubeadm
  build docker-infrastructure-manager sigs.k8s.io/cluster-api/test/infrastructure/docker
  core=$(go list -m -f '{{.Dir}}' "sigs.k8s.io/cluster-api")
  test=$(go list -m -f '{{.Dir}}' "sigs.k8s.io/cluster-api/test")
  cp "$core"/controlplane/kubeadm/config/crd/bases/*.yaml "$work/bin/crds/kubeadm-control-plane/"
  cp "$core"/bootstrap/kubeadm/config/crd/bases/*.yaml "$work/bin/crds/kubeadm-bootstrap/"
  # Docker* (containers) and Dev* (the same provider's kinds with a docker or an in-memory backend).
  cp "$test"/infrastructure/docker/config/crd/bases/*.yaml "$work/bin/crds/docker/"
  # The contract labels each provider's config/crd/kustomization.yaml adds: without them the core manager cannot
  # tell which version of a template kind serves the v1beta2 contract, and no ClusterClass naming it reconciles.
  chmod -R u+w "$work/bin/crds"
  sed -i '0,/^metadata:$/s//metadata:\n  labels:\n    cluster.x-k8s.io\/v1beta1: v1beta1\n    cluster.x-k8s.io\/v1beta2: v1beta2/' \
    "$work"/bin/crds/*/*.yaml
) >&2
chmod -R u+w,go+rX "$work/bin"; rm -rf "$out"; mv "$work/bin" "$out"
echo "build-providers.sh: Cluster API $version providers ready in $((SECONDS - start)) s in $out" >&2
echo "$out"
