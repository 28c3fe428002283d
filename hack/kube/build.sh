#!/usr/bin/env bash
# Makes sure kube-apiserver, etcd, kube-controller-manager and kube-scheduler exist for the tests and the
# local demo, and prints the folder that holds them (the envtest KUBEBUILDER_ASSETS convention; such a
# folder with only kube-apiserver and etcd still works, its control planes just run no controller-manager).
#
# Order: $KUBEBUILDER_ASSETS if set and complete; else the per-machine cache
# ($OPENMCP_KUBE_CACHE, default ~/.cache/openmcp-engine/kube/<version>); else build from the Go
# module proxy with the wrapper module in this folder (GOTOOLCHAIN=local), once per machine. If that
# release fails to build, the neighbouring minor releases are tried before giving up.
# Only the last line of stdout is the folder; progress goes to stderr.
#
# `build.sh node` instead makes sure of the node binaries a kind node image needs (kubelet, kubeadm, kubectl,
# kube-proxy) for exactly the pinned release, in <cache>/<version>-node (hack/containers/ensure.sh uses them).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../go-env.sh"

usable() { [ -x "$1/kube-apiserver" ] && [ -x "$1/etcd" ]; }
complete() { usable "$1" && [ -x "$1/kube-controller-manager" ] && [ -x "$1/kube-scheduler" ]; }

# `build.sh etcdutl`: etcdutl (restores etcd snapshots into a data folder) of the etcd release hack/kube/go.mod
# pins, from the wrapper module in etcdutl/, into <cache>/etcdutl-<version>; $KUBEBUILDER_ASSETS holding one wins.
if [ "${1:-}" = etcdutl ]; then
  [ -n "${KUBEBUILDER_ASSETS:-}" ] && [ -x "$KUBEBUILDER_ASSETS/etcdutl" ] && { echo "$KUBEBUILDER_ASSETS"; exit 0; }
  command -v go >/dev/null || { echo "build.sh: no 'go' on PATH; install Go or put etcdutl into \$KUBEBUILDER_ASSETS" >&2; exit 1; }
  etcd_version=$(awk '$1 == "go.etcd.io/etcd/etcdutl/v3" { print $2; exit }' "$here/etcdutl/go.mod")
  cache_root=${OPENMCP_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/openmcp-engine/kube}
  out="$cache_root/etcdutl-$etcd_version"
  [ -x "$out/etcdutl" ] && { echo "$out"; exit 0; }
  mkdir -p "$cache_root"
  tmp=$(mktemp -d "$cache_root/.build-etcdutl-$etcd_version.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  echo "build.sh: building etcdutl $etcd_version with $(go version | cut -d' ' -f3)" >&2
  (cd "$here/etcdutl" && go build -ldflags='-s -w' -o "$tmp/etcdutl" go.etcd.io/etcd/etcdutl/v3) >&2
  chmod 755 "$tmp"; rm -rf "$out"; mv "$tmp" "$out"
  echo "$out"; exit 0
fi

if [ -n "${KUBEBUILDER_ASSETS:-}" ] && [ "${1:-}" != node ]; then
  usable "$KUBEBUILDER_ASSETS" || { echo "build.sh: KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS lacks kube-apiserver or etcd" >&2; exit 1; }
  echo "$KUBEBUILDER_ASSETS"; exit 0
fi
command -v go >/dev/null || { echo "build.sh: no 'go' on PATH; install Go or set KUBEBUILDER_ASSETS" >&2; exit 1; }

pinned=$(awk '$1 == "k8s.io/kubernetes" { print $2; exit }' "$here/go.mod")
cache_root=${OPENMCP_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/openmcp-engine/kube}
# OPENMCP_KUBE_VERSION=vX.Y.Z builds another release than the pinned one (a second kind node image, to
# upgrade Clusters to), from a wrapper module gen-gomod.sh writes once into the cache; no neighbour is tried.
moddir=$here
if [ -n "${OPENMCP_KUBE_VERSION:-}" ] && [ "$OPENMCP_KUBE_VERSION" != "$pinned" ]; then
  pinned=$OPENMCP_KUBE_VERSION moddir="$cache_root/gomod-$OPENMCP_KUBE_VERSION"
  [ -f "$moddir/go.sum" ] || { mkdir -p "$moddir" && "$here/gen-gomod.sh" "$pinned" "$moddir" >&2; }
fi

# Stamp the version the way Kubernetes' own build does, so /version and emulation defaults are right.
kube_ldflags() {
  local minor=${1#v1.} v="-X k8s.io/component-base/version"
  echo "-s -w $v.gitVersion=$1 $v.gitMajor=1 $v.gitMinor=${minor%%.*} $v.gitTreeState=clean"
}

if [ "${1:-}" = node ]; then
  out="$cache_root/$pinned-node" names="kubelet kubeadm kubectl kube-proxy"
  all() { for n in $names; do [ -x "$1/$n" ] || return 1; done; }
  all "$out" && { echo "$out"; exit 0; }
  mkdir -p "$cache_root"
  tmp=$(mktemp -d "$cache_root/.build-$pinned-node.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  echo "build.sh: building the Kubernetes $pinned node binaries ($names) with $(go version | cut -d' ' -f3)" >&2
  start=$SECONDS
  for n in $names; do
    (cd "$moddir" && go build -ldflags="$(kube_ldflags "$pinned")" -o "$tmp/$n" "k8s.io/kubernetes/cmd/$n") >&2
  done
  chmod 755 "$tmp"; rm -rf "$out"; mv "$tmp" "$out"
  echo "build.sh: built the $pinned node binaries in $((SECONDS - start)) s into $out" >&2
  echo "$out"; exit 0
fi

# build <moddir> <version>: builds the binaries the cache lacks; the folder appears (or is replaced) only when complete.
build() {
  local moddir=$1 version=$2 out="$cache_root/$2" tmp
  complete "$out" && { echo "$out"; return 0; }
  mkdir -p "$cache_root"
  tmp=$(mktemp -d "$cache_root/.build-$version.XXXXXX")
  # A cache from before the controller-manager was built keeps what it has: only the missing binaries are built.
  [ -d "$out" ] && cp -p "$out"/* "$tmp"/ 2>/dev/null || true
  echo "build.sh: building the Kubernetes $version binaries this machine lacks with $(go version | cut -d' ' -f3) (first time: 10-30 min)" >&2
  local start=$SECONDS
  kube() { [ -x "$tmp/$1" ] || go build -ldflags="$(kube_ldflags "$version")" -o "$tmp/$1" "k8s.io/kubernetes/cmd/$1"; }
  if (cd "$moddir" && kube kube-apiserver && kube kube-controller-manager && kube kube-scheduler \
      && { [ -x "$tmp/etcd" ] || go build -ldflags='-s -w' -o "$tmp/etcd" go.etcd.io/etcd/server/v3; }) >&2; then
    chmod 755 "$tmp"; rm -rf "$out"; mv "$tmp" "$out"
    echo "build.sh: built $version in $((SECONDS - start)) s into $out" >&2
    echo "$out"; return 0
  fi
  rm -rf "$tmp"; return 1
}

build "$moddir" "$pinned" && exit 0
[ "$moddir" = "$here" ] || { echo "build.sh: could not build Kubernetes $pinned (OPENMCP_KUBE_VERSION)" >&2; exit 1; }

# Neighbouring minor releases: newest patch of minor-1, then minor+1, each with a generated module.
minor=$(echo "$pinned" | cut -d. -f2)
for m in $((minor - 1)) $((minor + 1)); do
  candidate=$(go list -m -versions k8s.io/kubernetes 2>/dev/null | tr ' ' '\n' | grep -E "^v1\.$m\.[0-9]+$" | sort -V | tail -1 || true)
  [ -n "$candidate" ] || continue
  complete "$cache_root/$candidate" && { echo "$cache_root/$candidate"; exit 0; }
  echo "build.sh: $pinned failed; trying $candidate" >&2
  alt=$(mktemp -d)
  "$here/gen-gomod.sh" "$candidate" "$alt" >&2 && build "$alt" "$candidate" && { rm -rf "$alt"; exit 0; }
  rm -rf "$alt"
done
echo "build.sh: could not build the Kubernetes binaries ($pinned or its neighbours). Set KUBEBUILDER_ASSETS to a folder holding kube-apiserver and etcd (and kube-controller-manager)." >&2
exit 1
