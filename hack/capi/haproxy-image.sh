#!/usr/bin/env bash
# Makes sure the load-balancer image Cluster API's Docker provider (CAPD) v1.14 runs in front of a cluster's
# control-plane machines exists in the Docker engine, built offline from Debian's haproxy, and prints
# `haproxyImage=<name>` on stdout (progress on stderr).
#
# CAPD asks for kindest/haproxy:v20230606-42a2262b (test/infrastructure/docker/internal/loadbalancer/const.go)
# unless a DockerCluster sets spec.loadBalancer.imageRepository/imageTag, and pulls it only when the engine lacks
# it. It starts the container with `haproxy -W -db -f /usr/local/etc/haproxy/haproxy.cfg`, writes that file with
# `docker exec … mkdir -p` and `cp /dev/stdin <file>`, reads it back with `cp <file> /dev/stdout`, and sends
# SIGHUP to reload: so the image needs haproxy on PATH, mkdir and cp, and a config that starts with no backend.
# Everything else CAPD runs is the machines' node image (kindest/node:v<version>, from hack/containers/ensure.sh).
#
# CAPD's config asks for `maxconn 100000`, for which haproxy raises its file limit to about 200,000; where the
# container may not (a machine whose capability bounding set lacks CAP_SYS_RESOURCE: Docker's containers get
# 20,000 here), haproxy refuses the config ("Cannot raise FD limit … Loading failure!") and never balances. So
# `haproxy` on the image's PATH is a wrapper that caps the connections (`-n`, which overrides the config's
# maxconn) at what the container's file limit allows, and changes nothing where the limit is high enough.
#
# Usage: hack/capi/haproxy-image.sh   (DOCKER=<docker CLI> to use another than the one on PATH)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
DOCKER=${DOCKER:-docker}
image=${OPENMCP_CAPD_HAPROXY_IMAGE:-kindest/haproxy:v20230606-42a2262b}
base_image=openmcp-engine-base:bookworm
# Raised whenever what this script builds changes, so that an image an older version built is built again.
revision=2
label=engine.openmcp.cloud/haproxy-revision

have_it() {
  [ "$("$DOCKER" image inspect -f "{{index .Config.Labels \"$label\"}}" "$image" 2>/dev/null || true)" = "$revision" ]
}
have_it && { echo "haproxyImage=$image"; exit 0; }
# One build per machine at a time (test workers may ask together); the second finds the first's image.
lock=${XDG_CACHE_HOME:-$HOME/.cache}/openmcp-engine/capi-providers/haproxy-image.lock
mkdir -p "$(dirname "$lock")"
exec 9>"$lock"
flock 9
have_it && { echo "haproxyImage=$image"; exit 0; }
"$DOCKER" image inspect "$base_image" >/dev/null 2>&1 || "$root/hack/containers/ensure.sh" base-image >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# What kind's own haproxy image starts with: a control-plane frontend and an empty backend CAPD fills in.
cat > "$work/haproxy.cfg" <<'CONFIG'
# replaced by Cluster API's Docker provider once the first control-plane machine exists
global
  log /dev/log local0
  log /dev/log local1 notice
  daemon

defaults
  log global
  mode tcp
  option dontlognull
  timeout connect 5000
  timeout client 50000
  timeout server 50000
  default-server init-addr none

frontend control-plane
  bind *:6443
  default_backend kube-apiservers

backend kube-apiservers
  option httpchk GET /healthz
CONFIG
cat > "$work/haproxy" <<'WRAPPER'
#!/bin/sh
# haproxy with at most the connections this container's file limit allows (see hack/capi/haproxy-image.sh).
limit=$(ulimit -Hn)
if [ "$limit" != unlimited ] && [ "$limit" -lt 200100 ]; then
  exec /usr/sbin/haproxy -n $(( (limit - 100) / 2 )) "$@"
fi
exec /usr/sbin/haproxy "$@"
WRAPPER
cat > "$work/Dockerfile" <<DOCKERFILE
FROM $base_image
RUN export DEBIAN_FRONTEND=noninteractive && apt-get update \\
    && apt-get install -y --no-install-recommends haproxy \\
    && apt-get clean -y && rm -rf /var/lib/apt/lists/* /usr/share/doc/* /usr/share/man/* \\
    && haproxy -v
COPY haproxy.cfg /usr/local/etc/haproxy/haproxy.cfg
COPY haproxy /usr/local/sbin/haproxy
RUN chmod 755 /usr/local/sbin/haproxy
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
LABEL $label=$revision
STOPSIGNAL SIGUSR1
ENTRYPOINT ["haproxy", "-W", "-db", "-f", "/usr/local/etc/haproxy/haproxy.cfg"]
DOCKERFILE
start=$SECONDS
echo "haproxy-image.sh: building $image (revision $revision) from $base_image with Debian's haproxy" >&2
DOCKER_BUILDKIT=0 "$DOCKER" build -q -t "$image" "$work" >&2
# A config check, as CAPD's first start will run it.
"$DOCKER" run --rm --entrypoint haproxy "$image" -c -f /usr/local/etc/haproxy/haproxy.cfg >&2
# An older revision of this tag is left dangling: remove it (never an image a container still uses).
"$DOCKER" image prune -f --filter "label=$label" >/dev/null 2>&1 || true
echo "haproxy-image.sh: built $image in $((SECONDS - start)) s" >&2
echo "haproxyImage=$image"
