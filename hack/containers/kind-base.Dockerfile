# kind's node base image (sigs.k8s.io/kind images/base) rebuilt with no registry and no downloads but Debian's
# apt mirror: kind's own files/ (copied into the build context by ensure.sh) with Debian's systemd,
# containerd, runc and CNI plugins in place of kind's release tarballs. The Kubernetes bits are added later.
ARG BASE_IMAGE
FROM ${BASE_IMAGE}
# --force-confold: kind's /etc/containerd/config.toml is copied below; keep any config Debian would prompt for.
RUN export DEBIAN_FRONTEND=noninteractive && apt-get update \
    && apt-get install -y --no-install-recommends -o Dpkg::Options::=--force-confold \
      systemd conntrack iptables nftables iproute2 ethtool util-linux mount kmod libseccomp2 pigz \
      bash ca-certificates curl jq procps \
      containerd runc containernetworking-plugins \
    && apt-get clean -y \
    && rm -rf /var/cache/debconf/* /var/lib/apt/lists/* /var/log/* /tmp/* /var/tmp/* /usr/share/doc/* /usr/share/man/* \
    && find /lib/systemd/system/sysinit.target.wants/ -name "systemd-tmpfiles-setup.service" -delete \
    && rm -f /lib/systemd/system/multi-user.target.wants/* /etc/systemd/system/*.wants/* \
      /lib/systemd/system/local-fs.target.wants/* /lib/systemd/system/sockets.target.wants/*udev* \
      /lib/systemd/system/sockets.target.wants/*initctl* /lib/systemd/system/basic.target.wants/* \
    && echo "ReadKMsg=no" >> /etc/systemd/journald.conf \
    && ln -sf "$(which systemd)" /sbin/init
COPY files/ /
# kind's units expect containerd in /usr/local/bin and the CNI plugins in /opt/cni/bin; Debian has them elsewhere.
RUN ln -s /usr/bin/containerd /usr/local/bin/containerd \
    && mkdir -p /opt/cni/bin && ln -s /usr/lib/cni/* /opt/cni/bin/ \
    && ctr oci spec \
      | jq '.hooks.createContainer[.hooks.createContainer | length] |= . + {"path": "/kind/bin/mount-product-files.sh"}' \
      | jq 'del(.process.rlimits)' > /etc/containerd/cri-base.json \
    && containerd --version && runc --version \
    && systemctl enable kubelet.service containerd.service undo-mount-hacks.service \
    && systemctl mask systemd-binfmt.service \
    && mkdir -p /etc/kubernetes/manifests
ENV container=docker
STOPSIGNAL SIGRTMIN+3
ENTRYPOINT [ "/usr/local/bin/entrypoint", "/sbin/init" ]
