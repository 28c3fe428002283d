#!/usr/bin/env bash
# An OCI runtime for dockerd: runc, with the two fixes that containers holding containers (kind nodes, Cluster
# API's Docker machines) need on some hosts. ensure.sh installs it only where one of them applies; each fix
# checks for itself whether it does. Arguments go to runc unchanged.
#
# 1. Where the capability bounding set lacks CAP_SYS_RESOURCE (CapBnd in /proc/self/status, bit 24), runc
#    cannot grant it and every privileged container fails with "unable to apply caps: operation not
#    permitted": it is removed from the bundle's config.json on create/run and from the process file on exec.
# 2. On a cgroup v1 host, a SIGKILL cannot end a process in a frozen cgroup until the cgroup is thawed (v2 lets
#    it through). The runc inside a node freezes a new container's cgroup while it sets its device rules; a node
#    killed in that moment (a kind cluster deleted while a Pod starts) leaves that cgroup FROZEN with runc's init
#    in it, the node's init never finishes exiting, and `docker rm -f` fails with "tried to kill container, but
#    did not receive an exit event" (runc's open issue #2105). After a SIGKILL, the container's frozen
#    sub-cgroups are thawed, so that what they hold dies too.
set -euo pipefail
export PATH="$PATH:/usr/sbin:/usr/bin:/sbin:/bin"

lacks_sys_resource() {
  local bnd
  bnd=$(awk '/^CapBnd:/ { print $2 }' /proc/self/status)
  ! (((16#$bnd >> 24) & 1))
}

# strip <json file> <jq path>: rewrites the capability lists at <jq path> without CAP_SYS_RESOURCE.
strip() {
  local file=$1 path=$2 tmp
  [ -f "$file" ] || return 0
  tmp=$(mktemp "$file.XXXXXX")
  jq "if $path then $path |= map_values(if type == \"array\" then map(select(. != \"CAP_SYS_RESOURCE\")) else . end) else . end" \
    "$file" >"$tmp" && mv "$tmp" "$file" || rm -f "$tmp"
}

# thaw_below <cgroup dir>: for up to a minute, until the container's cgroup is gone, thaws every cgroup below it
# that was frozen directly (freezer.self_freezing 1). Runs detached from runc's caller, whose pipes it must not hold.
thaw_below() {
  local dir=$1 state i
  for i in $(seq 240); do
    [ -d "$dir" ] || return 0
    while IFS= read -r state; do
      [ "$(cat "${state%.state}.self_freezing" 2>/dev/null)" = 1 ] && echo THAWED >"$state" 2>/dev/null || true
    done < <(find "$dir" -mindepth 2 -name freezer.state 2>/dev/null)
    sleep 0.25
  done
}

# runc's global flags come before the command; find the command, its --bundle / --process value, and for kill
# the container and the signal (`kill [--all] <id> [signal]`, SIGTERM when none is given).
command='' bundle='' process='' prev='' positional=()
for arg in "$@"; do
  case "$prev" in
    --bundle | -b) bundle=$arg ;;
    --process | -p) process=$arg ;;
  esac
  case "$arg" in
    --bundle=*) bundle=${arg#--bundle=} ;;
    --process=*) process=${arg#--process=} ;;
    create | run | exec | kill) [ -z "$command" ] && command=$arg && prev=$arg && continue ;;
  esac
  [ -n "$command" ] && [ "${arg#-}" = "$arg" ] && positional+=("$arg")
  prev=$arg
done
case "$command" in
  create | run) ! lacks_sys_resource || strip "${bundle:-.}/config.json" .process.capabilities ;;
  exec) [ -z "$process" ] || ! lacks_sys_resource || strip "$process" .capabilities ;;
  kill)
    id=${positional[0]:-} signal=${positional[1]:-SIGTERM}
    case "${signal#SIG}" in
      9 | KILL)
        cgroup=''
        [ -z "$id" ] || [ ! -d /sys/fs/cgroup/freezer ] ||
          cgroup=$(find /sys/fs/cgroup/freezer -maxdepth 3 -type d -name "*$id*" -print -quit 2>/dev/null)
        if [ -n "$cgroup" ]; then
          runc "$@" && rc=0 || rc=$?
          setsid bash -c "$(declare -f thaw_below); thaw_below '$cgroup'" </dev/null >/dev/null 2>&1 &
          exit $rc
        fi
        ;;
    esac
    ;;
esac
exec runc "$@"
