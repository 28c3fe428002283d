#!/bin/sh
# iptables, iptables-save, iptables-restore and their ip6 twins in the kube-proxy image point here first: the
# first call picks the backend the node already uses (legacy or nft, by counting rules, as kind's node
# entrypoint and kubernetes-sigs/iptables-wrappers do), links the commands to it, and runs the real command.
legacy=$( (iptables-legacy-save || true; ip6tables-legacy-save || true) 2>/dev/null | grep -c '^-' || true)
nft=$( (timeout 5 sh -c "iptables-nft-save; ip6tables-nft-save" || true) 2>/dev/null | grep -c '^-' || true)
if [ "$legacy" -ge "$nft" ]; then mode=legacy; else mode=nft; fi
for cmd in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do
  ln -sf "xtables-$mode-multi" "/usr/sbin/$cmd"
done
exec "/usr/sbin/$(basename "$0")" "$@"
