# The kind node image for the pinned Kubernetes release, assembled offline (sourced by ensure.sh): what
# `kind build node-image` does, by hand, since that always pulls etcd, coredns, pause and kindnetd from
# registries. Steps: the Kubernetes binaries (hack/kube/build.sh), the kind base image (kind-base.Dockerfile),
# one image per component kubeadm asks for, then the node: base + kubeadm/kubelet/kubectl + those images
# imported into its containerd, committed as kindest/node:<version>.

# ------------------------------------------------------------------------------- Kubernetes binaries
kube_cp_dir='' kube_node_dir=''
step_kube_node_binaries() {
  # hack/kube/build.sh takes no lock: wait for a build of the same release that is already running.
  while pgrep -f "openmcp-engine/kube/\.build-$kube_version\." >/dev/null; do
    log "waiting for a running hack/kube/build.sh of $kube_version to finish"
    sleep 15
  done
  kube_cp_dir=$("$root/hack/kube/build.sh" | tail -1)
  [ -x "$kube_cp_dir/kube-controller-manager" ] && [ -x "$kube_cp_dir/kube-scheduler" ] ||
    die "$kube_cp_dir lacks kube-controller-manager or kube-scheduler, which a node image needs"
  "$kube_cp_dir/kube-apiserver" --version | grep -qx "Kubernetes $kube_version" ||
    die "$kube_cp_dir holds $("$kube_cp_dir/kube-apiserver" --version), not $kube_version (KUBEBUILDER_ASSETS?)"
  kube_node_dir=$("$root/hack/kube/build.sh" node | tail -1)
  out "kubectl=$kube_node_dir/kubectl"
  out "kubernetesVersion=${kube_version#v}"
}

# ----------------------------------------------------------------------------------- kind base image
kind_module_dir() {
  GOFLAGS= go mod download -json "sigs.k8s.io/kind@$kind_version" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p'
}

step_kind_base_image() {
  have_image "$kind_base_image" && return 0
  step_base_image
  local ctx files
  files=$(kind_module_dir)/images/base/files
  [ -d "$files" ] || die "no $files in the Go module cache"
  new_scratch ctx kind-base
  cp -r "$files" "$ctx/files"
  cp "$here/kind-base.Dockerfile" "$ctx/Dockerfile"
  # What kind's Dockerfile does with COPY --chmod, which the classic builder lacks: scripts 0755, the rest 0644.
  chmod -R u+w "$ctx/files"
  find "$ctx/files" -type d -exec chmod 755 {} +
  find "$ctx/files" -type f -exec chmod 644 {} +
  chmod 755 "$ctx"/files/usr/local/bin/* "$ctx"/files/kind/bin/*
  log "building $kind_base_image from $base_image with kind's images/base/files and Debian's packages"
  DOCKER_BUILDKIT=0 "$DOCKER" build -q --build-arg "BASE_IMAGE=$base_image" -t "$kind_base_image" "$ctx" >&2
}

# ------------------------------------------------------------------------------------ component images
# The Go processes of a node (its control plane's Pods through their images' ENV, kubelet and containerd through
# systemd's default environment) collect garbage at GOGC=400 (Go's default 100) and run Go code on one thread
# (GOMAXPROCS=1, default one a core), as the test run's host processes do (vitest.config.ts). Measured on this
# 2-core machine (2026-11-30, one-node boots, four alternating pairs each): GOGC=400 took a boot from 8.7 to 7.9 CPU-s
# to Ready and from 15.5 to 14.2 forty seconds later; GOMAXPROCS=1 then to 7.3 and 13.1, in the same 12–14 s. The
# cost: about 100 MB more heap in its kube-apiserver, one thread for its bursts. kind's published images keep Go's
# defaults; this image is this machine's stand-in for them.
node_go_env="GOGC=400 GOMAXPROCS=1"
# The recipe of the component images (a label): an image of an older one is built again.
component_recipe=go-env-2
component_current() {
  have_image "$1" &&
    [ "$("$DOCKER" image inspect -f '{{index .Config.Labels "openmcp-engine.component-image"}}' "$1")" = "$component_recipe" ]
}

# component_image <image> <file> <path in image> [extra Dockerfile lines]: an image holding one binary.
component_image() {
  local image=$1 file=$2 path=$3 extra=${4:-} ctx
  new_scratch ctx component
  cp "$file" "$ctx/$(basename "$path")"
  [ ! -f "$here/iptables-wrapper.sh" ] || cp "$here/iptables-wrapper.sh" "$ctx/"
  printf 'FROM %s\nCOPY %s %s\n%s\nENV %s\nLABEL openmcp-engine.component-image=%s\nENTRYPOINT ["%s"]\n' \
    "${FROM_IMAGE:-$base_image}" "$(basename "$path")" "$path" "$extra" "$node_go_env" "$component_recipe" "$path" >"$ctx/Dockerfile"
  log "building $image"
  local replaced
  replaced=$("$DOCKER" image inspect -f '{{.Id}}' "$image" 2>/dev/null) || true
  DOCKER_BUILDKIT=0 "$DOCKER" build -q -t "$image" "$ctx" >&2
  # The image of an older recipe, now untagged, serves nothing (refused while a container uses it).
  [ -z "$replaced" ] || "$DOCKER" rmi "$replaced" >/dev/null 2>&1 || true
}

# coredns_binary <version>: CoreDNS from the Go module proxy, cached per version (~4 min the first time);
# sets $built. (Helpers that make work folders set a variable rather than print: a $(...) would lose them.)
built=''
coredns_binary() {
  local dir=$cache/coredns/$1 tmp
  if [ ! -x "$dir/coredns" ]; then
    new_scratch tmp coredns
    log "building CoreDNS $1 with $(go version | cut -d' ' -f3) (first time: ~4 min)"
    # Static (CGO off): the image holds nothing but this binary, like CoreDNS's own.
    CGO_ENABLED=0 GOBIN=$tmp go install -ldflags='-s -w' "github.com/coredns/coredns@$1" >&2
    mkdir -p "$cache/coredns"
    chmod 755 "$tmp"
    rm -rf "$dir"
    mv "$tmp" "$dir"
  fi
  built=$dir/coredns
}

# pause_binary <tag>: Kubernetes' pause, statically linked from the source in the Go module cache; sets $built.
pause_binary() {
  local src ctx
  src=$(cd "$root/hack/kube" && GOFLAGS=-mod=mod go list -m -f '{{.Dir}}' k8s.io/kubernetes)/build/pause/linux/pause.c
  command -v gcc >/dev/null || apt_install gcc libc6-dev
  new_scratch ctx pause
  gcc -Os -Wall -static -DVERSION="v$1" -o "$ctx/pause" "$src" >&2
  built=$ctx/pause
}

# The images kubeadm of this release asks for, built from the binaries, into $component_images.
component_images=()
step_component_images() {
  if [ -z "$kube_node_dir" ]; then step_kube_node_binaries >/dev/null; fi
  local image name tag
  component_images=()
  while read -r image; do
    name=${image%:*} tag=${image##*:}
    component_images+=("$image")
    component_current "$image" && continue
    case "${name##*/}" in
      kube-apiserver | kube-controller-manager | kube-scheduler)
        component_image "$image" "$kube_cp_dir/${name##*/}" "/usr/local/bin/${name##*/}" ;;
      kube-proxy)
        # kube-proxy programs the node's iptables: Debian's, behind a wrapper that picks the node's backend.
        component_image "$image" "$kube_node_dir/kube-proxy" /usr/local/bin/kube-proxy \
          "$(printf '%s\n' 'RUN export DEBIAN_FRONTEND=noninteractive && apt-get update && apt-get install -y --no-install-recommends iptables nftables conntrack && rm -rf /var/lib/apt/lists/*' \
            'COPY iptables-wrapper.sh /usr/sbin/iptables-wrapper' \
            'RUN for c in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do ln -sf iptables-wrapper /usr/sbin/$c; done')" ;;
      etcd) component_image "$image" "$kube_cp_dir/etcd" /usr/local/bin/etcd ;;
      pause) pause_binary "$tag"; FROM_IMAGE=scratch component_image "$image" "$built" /pause 'USER 65535:65535' ;;
      coredns) coredns_binary "$tag"; FROM_IMAGE=scratch component_image "$image" "$built" /coredns ;;
      *) die "kubeadm asks for $image, which this script does not know how to build" ;;
    esac
  done < <("$kube_node_dir/kubeadm" config images list --kubernetes-version "$kube_version" 2>/dev/null |
    awk '/coredns/ { slow = $0; next } { print } END { if (slow) print slow }') # CoreDNS, the slowest, last
  [ ${#component_images[@]} -gt 0 ] || die "kubeadm config images list printed nothing"
}

# ----------------------------------------------------------------------------------------- node image
# The component images go into the node's containerd unpacked, their layer blobs discarded (as containerd's own
# discard_unpacked_layers does after a pull): imported packed, each node unpacked all of them at its first start,
# 10–13 CPU-s of containerd (mostly system time) per node boot, for dozens of nodes in a test run. Unpacked here, a
# node boots on 12 CPU-s instead of 24 (its cgroup and dockerd's copy of its /var volume), in 14 s instead of 19
# (measured 2026-11-30, one-node kind create on an idle machine). Their unpacked snapshots then sit outside /var
# (/opt/containerd-snapshots, a symlink each in containerd's snapshots folder): kind and Cluster API's Docker
# machines give every node an anonymous volume at /var, which Docker fills with a copy of the image's /var; with
# the snapshots there, 640 MB and 1.5–3.0 CPU-s of dockerd per node, now 7 MB and 0.4, a boot 11–13 s → 9.5–11
# (three alternating boots each, 2026-12-01). Overlayfs takes its lower layers from any filesystem, the image's own
# overlay too; only a container's writable layer must be on the volume, and containerd makes those there as before.
# The label names this recipe: an image of an older one is built again.
node_image_recipe=snapshots-outside-var-$component_recipe
node_image_current() {
  have_image "$node_image" &&
    [ "$("$DOCKER" image inspect -f '{{index .Config.Labels "openmcp-engine.node-image"}}' "$node_image")" = "$node_image_recipe" ]
}

step_kind_node_image() {
  if ! node_image_current; then
    step_kind_base_image
    step_component_images
    local cid pause ctr_label=() image
    pause=$(printf '%s\n' "${component_images[@]}" | grep '/pause:')
    log "assembling $node_image from $kind_base_image and ${#component_images[@]} component images"
    # Privileged, as a kind node is: unpacking mounts overlay filesystems.
    cid=$("$DOCKER" run -d --entrypoint=sleep --privileged "$kind_base_image" infinity)
    build_containers+=("$cid")
    for b in kubeadm kubelet kubectl; do "$DOCKER" cp "$kube_node_dir/$b" "$cid:/usr/bin/$b"; done
    in_node() { "$DOCKER" exec -i "$cid" "$@"; }
    echo "$kube_version" | in_node sh -c 'cat > /kind/version'
    in_node mkdir -p /kind/manifests /etc/cni/net.d
    in_node sh -c 'cat > /kind/manifests/default-cni.yaml' <"$here/default-cni.yaml"
    in_node sh -c 'cat > /etc/cni/net.d/10-kind-static.conflist' <"$here/static-cni.conflist"
    in_node sh -c "mkdir -p /etc/systemd/system.conf.d && printf '[Manager]\nDefaultEnvironment=$node_go_env\n' > /etc/systemd/system.conf.d/10-go-env.conf"
    # containerd's sandbox image must be the pause image kubeadm asks for (and the one imported below).
    in_node sed -i "s|^\(\s*sandbox_image = \).*|\1\"$pause\"|" /etc/containerd/config.toml
    if lacks_sys_resource; then
      log "node image: restrict_oom_score_adj = true (this machine lacks CAP_SYS_RESOURCE: Pod sandboxes fail otherwise)"
      in_node sed -i 's|^\(\s*restrict_oom_score_adj = \).*|\1true|' /etc/containerd/config.toml
    fi
    if cgroup_v1; then
      log "node image: kubelet --fail-cgroupv1=false (this host is on cgroup v1, which kubelet >= 1.35 refuses by default)"
      in_node sed -i 's|^KUBELET_EXTRA_ARGS=.*|& --fail-cgroupv1=false|' /etc/default/kubelet
    fi
    in_node sh -c 'nohup containerd >/var/log/build-containerd.log 2>&1 & echo $! >/run/build-containerd.pid'
    in_node sh -c 'for i in $(seq 30); do ctr version >/dev/null 2>&1 && exit 0; sleep 1; done; cat /var/log/build-containerd.log; exit 1' >&2
    # Pinned images are never removed by kubelet's image garbage collection (ctr >= 1.7 has --label).
    in_node ctr images import --help 2>&1 | grep -q -- '--label' && ctr_label=(--label=io.cri-containerd.pinned=pinned)
    for image in "${component_images[@]}"; do
      log "node image: importing $image"
      "$DOCKER" save "$image" | in_node ctr -n k8s.io images import "${ctr_label[@]}" --digests - >/dev/null
    done
    # Unpacked, the layers' blobs serve nothing: each image's manifest lists them after "layers".
    in_node sh -c 'for manifest in $(ctr -n k8s.io images ls | awk "NR > 1 { print \$3 }" | sort -u); do
        ctr -n k8s.io content get "$manifest" | sed "s/.*\"layers\"://" | grep -o "sha256:[0-9a-f]*"
      done | sort -u | xargs -r ctr -n k8s.io content rm >/dev/null'
    in_node sh -c 'ctr -n k8s.io images check | awk "NR > 1 && \$NF != \"true\" { print; bad = 1 } END { exit bad }"' >&2 ||
      die "node image: an image above is not unpacked"
    # Stop it and wait until it is gone or a zombie (`sleep`, the container's pid 1, never reaps it).
    in_node sh -c 'p=$(cat /run/build-containerd.pid); kill $p
      while [ -e /proc/$p ] && [ "$(cut -d" " -f3 /proc/$p/stat)" != Z ]; do sleep 1; done
      rm -f /run/build-containerd.pid /var/log/build-containerd.log'
    in_node sh -ec 'from=/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs/snapshots to=/opt/containerd-snapshots
      mkdir -p "$to"
      for id in $(ls "$from"); do mv "$from/$id" "$to/$id"; ln -s "$to/$id" "$from/$id"; done'
    local replaced
    replaced=$("$DOCKER" image inspect -f '{{.Id}}' "$node_image" 2>/dev/null) || true
    "$DOCKER" commit --change 'ENTRYPOINT [ "/usr/local/bin/entrypoint", "/sbin/init" ]' --change 'CMD []' \
      --change "LABEL openmcp-engine.node-image=$node_image_recipe" "$cid" "$node_image" >/dev/null
    [ -z "$replaced" ] || "$DOCKER" rmi "$replaced" >/dev/null 2>&1 || true
    log "built $node_image"
  fi
  out "nodeImage=$node_image"
}
