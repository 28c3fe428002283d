#!/bin/sh
# A stand-in for crictl inside machines of Cluster API's Docker provider (CAPD) made from the offline kind node
# image, which has no crictl (cri-tools is not served by the Go module proxy: 403). CAPD runs only `crictl ps`, to
# wait until the machine's container runtime answers before it runs kubeadm; this asks containerd the same through
# `ctr`, which the node image has. Mounted read-only at /usr/local/bin/crictl by the tests' DockerMachineTemplates.
case "${1:-}" in
  ps) exec ctr --namespace k8s.io containers list ;;
  *) echo "crictl stand-in (hack/capi/crictl-shim.sh): only 'ps' is supported, not '$*'" >&2; exit 1 ;;
esac
