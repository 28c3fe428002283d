#!/usr/bin/env bash
# An OCI runtime for dockerd that is runc, minus CAP_SYS_RESOURCE: on machines whose capability bounding
# set lacks that capability (CapBnd in /proc/self/status, bit 24), runc cannot grant it and every
# privileged container (kind nodes are privileged) fails with "unable to apply caps: operation not
# permitted". This removes it from the bundle's config.json on create/run and from the process file on
# exec, then hands over to runc with the arguments unchanged. ensure.sh installs it only where needed.
set -euo pipefail
export PATH="$PATH:/usr/sbin:/usr/bin:/sbin:/bin"

# strip <json file>: rewrites the capability lists at <jq path> without CAP_SYS_RESOURCE.
strip() {
  local file=$1 path=$2 tmp
  [ -f "$file" ] || return 0
  tmp=$(mktemp "$file.XXXXXX")
  jq "if $path then $path |= map_values(if type == \"array\" then map(select(. != \"CAP_SYS_RESOURCE\")) else . end) else . end" \
    "$file" >"$tmp" && mv "$tmp" "$file" || rm -f "$tmp"
}

# runc's global flags come before the command; find the command and its --bundle / --process value.
command='' bundle='' process='' prev=''
for arg in "$@"; do
  case "$prev" in
    --bundle | -b) bundle=$arg ;;
    --process | -p) process=$arg ;;
  esac
  case "$arg" in
    --bundle=*) bundle=${arg#--bundle=} ;;
    --process=*) process=${arg#--process=} ;;
    create | run | exec) [ -z "$command" ] && command=$arg ;;
  esac
  prev=$arg
done
case "$command" in
  create | run) strip "${bundle:-.}/config.json" .process.capabilities ;;
  exec) [ -n "$process" ] && strip "$process" .capabilities ;;
esac
exec runc "$@"
