/**
 * Snapshots (contract 1.7) of a kubeadm control plane whose node is a container (a kind node, a Cluster API Docker
 * machine), through the Docker CLI alone (an engine in a Pod with only the Docker socket takes them too): etcd's
 * consistent snapshot from its HTTP gateway inside the node (`curl` with kubeadm's etcd client certificate), and the
 * certificate authorities and service-account keys kubeadm keeps there. A rollback in place stops etcd and
 * kube-apiserver the way kubeadm's own restore does (their static Pod manifests moved aside), swaps in the data
 * `etcdutl` restored from the snapshot, and puts the manifests back.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, copyFile, mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { PassThrough, type Readable } from "node:stream";
import { etcdSnapshotFromGateway } from "../../controlplane/etcd-snapshot.ts";
import type { DockerRun } from "./docker-cli.ts";
import type { SnapshotFiles, StoredSnapshot } from "./folder-snapshots.ts";
import { foreignSnapshot } from "./snapshot-store.ts";

/** Where kubeadm keeps a node's certificates and keys. */
export const KUBEADM_PKI_DIRECTORY = "/etc/kubernetes/pki";

/** etcd's snapshot in a node's snapshot. */
export const NODE_ETCD_SNAPSHOT_FILE = "etcd.db";

/** kubeadm's keys in the node that a restored control plane needs to be the same to its clients (flat names). */
export const KUBEADM_PKI_FILES: Readonly<Record<string, string>> = {
  "ca.crt": "/etc/kubernetes/pki/ca.crt",
  "ca.key": "/etc/kubernetes/pki/ca.key",
  "sa.key": "/etc/kubernetes/pki/sa.key",
  "sa.pub": "/etc/kubernetes/pki/sa.pub",
  "front-proxy-ca.crt": "/etc/kubernetes/pki/front-proxy-ca.crt",
  "front-proxy-ca.key": "/etc/kubernetes/pki/front-proxy-ca.key",
  "etcd-ca.crt": "/etc/kubernetes/pki/etcd/ca.crt",
  "etcd-ca.key": "/etc/kubernetes/pki/etcd/ca.key",
};

/** etcd's gateway inside the node, with the client certificate kubeadm gives kube-apiserver. */
const ETCD_SNAPSHOT_CURL = [
  "curl",
  "--silent",
  "--show-error",
  "--fail",
  "--request",
  "POST",
  "--data",
  "{}",
  "--cacert",
  "/etc/kubernetes/pki/etcd/ca.crt",
  "--cert",
  "/etc/kubernetes/pki/apiserver-etcd-client.crt",
  "--key",
  "/etc/kubernetes/pki/apiserver-etcd-client.key",
  "https://127.0.0.1:2379/v3/maintenance/snapshot",
];

/** Where, in the node, a restore puts the snapshot's data and the etcdutl it restores it with. */
const NODE_RESTORE_FILE = "/var/lib/openmcp-restore.db";
const NODE_ETCDUTL = "/usr/local/bin/openmcp-etcdutl";

/**
 * The rollback in the node, each step safe to run again after a crash at any point: the static Pods of etcd and
 * kube-apiserver moved aside (kubelet stops them), etcd's exit awaited, the snapshot restored beside the data for the
 * member the manifest names, swapped in, the manifests put back (kubelet starts both on the restored data). Revisions
 * jump and older ones are compacted, so watchers of the old etcd relist (as Kubernetes' docs ask).
 */
const ROLLBACK_SCRIPT = `set -eu
held=/etc/kubernetes/openmcp-held
mkdir -p "$held"
for m in kube-apiserver etcd; do
  if [ -f /etc/kubernetes/manifests/$m.yaml ]; then mv /etc/kubernetes/manifests/$m.yaml "$held/"; fi
done
i=0
while pgrep -x etcd >/dev/null; do
  i=$((i + 1)); [ $i -le 120 ] || { echo "etcd did not stop within 120 s" >&2; exit 1; }
  sleep 1
done
name=$(sed -n 's/^ *- --name=//p' "$held/etcd.yaml")
peer=$(sed -n 's/^ *- --initial-advertise-peer-urls=//p' "$held/etcd.yaml")
rm -rf /var/lib/etcd.restoring
${NODE_ETCDUTL} snapshot restore ${NODE_RESTORE_FILE} --data-dir=/var/lib/etcd.restoring --name="$name" \\
  --initial-cluster="$name=$peer" --initial-advertise-peer-urls="$peer" --bump-revision=1000000000 --mark-compacted \\
  >/dev/null 2>/tmp/openmcp-restore.log || { tail -n 3 /tmp/openmcp-restore.log >&2; exit 1; }
rm -rf /var/lib/etcd.before-restore
if [ -d /var/lib/etcd ]; then mv /var/lib/etcd /var/lib/etcd.before-restore; fi
mv /var/lib/etcd.restoring /var/lib/etcd
rm -rf /var/lib/etcd.before-restore ${NODE_RESTORE_FILE}
mv "$held/etcd.yaml" "$held/kube-apiserver.yaml" /etc/kubernetes/manifests/
`;

/**
 * A clone's own after its rollback: the original's Nodes (restored with its data) removed, and what names the
 * original in kube-system's configuration (kube-proxy's kubeconfig, kubeadm's control-plane endpoint, the
 * cluster-info) made this clone's: the original's node names this node's, the original's control-plane endpoint
 * (kubeadm-config's, as restored) this node's own (its admin.conf's) — they would lead the clone's kube-proxy and
 * joining nodes to the original's API server, which may still run beside it on the Docker network; kubelet
 * restarted, so it registers this node again. A ConfigMap another controller writes meanwhile (Cluster API's
 * KubeadmControlPlane keeps kubeadm-config and kube-proxy) is read and rewritten again.
 */
const CLONE_SCRIPT = `set -eu
export KUBECONFIG=/etc/kubernetes/admin.conf
self=$(hostname)
old=$(kubectl -n kube-system get configmap kubeadm-config -o jsonpath='{.data.ClusterConfiguration}' | sed -n 's/^controlPlaneEndpoint: *//p')
new=$(sed -n 's|^ *server: https://||p' /etc/kubernetes/admin.conf | head -n 1)
others=$(kubectl get nodes -o jsonpath='{.items[*].metadata.name}' | tr ' ' '\\n' | grep -vx "$self" || true)
edits="-e s/x/x/"
for node in $others; do edits="$edits -e s/$node/$self/g"; done
if [ -n "$old" ] && [ -n "$new" ] && [ "$old" != "$new" ]; then
  edits="$edits -e s|$(printf '%s' "$old" | sed 's/[.]/\\\\./g')|$new|g"
fi
for ref in kube-system/kube-proxy kube-system/kubeadm-config kube-public/cluster-info; do
  i=0
  until ! kubectl -n "\${ref%/*}" get configmap "\${ref#*/}" -o yaml >/tmp/openmcp-cm.yaml 2>/dev/null ||
    sed $edits /tmp/openmcp-cm.yaml | kubectl replace -f - >/dev/null 2>/tmp/openmcp-cm.err; do
    i=$((i + 1)); [ $i -le 30 ] || { echo "could not rewrite ConfigMap $ref: $(tail -n 1 /tmp/openmcp-cm.err)" >&2; exit 1; }
    sleep 1
  done
done
for node in $others; do kubectl delete node "$node" --wait=false >/dev/null; done
systemctl restart kubelet
`;

/** Waits in the node until kube-apiserver answers ready on the restored data. */
const READY_SCRIPT = `i=0
until kubectl --kubeconfig=/etc/kubernetes/admin.conf get --raw=/readyz >/dev/null 2>&1; do
  i=$((i + 1)); [ $i -le 180 ] || { echo "kube-apiserver not ready within 180 s of the restore" >&2; exit 1; }
  sleep 1
done`;

/**
 * A command's stdout as a stream, failing with its last stderr lines when it exits non-zero (so a cut stream is an
 * error, not an end).
 */
function commandStream(command: string, args: readonly string[]): Readable {
  const child = spawn(command, [...args], { stdio: ["ignore", "pipe", "pipe"] });
  const out = new PassThrough();
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr = (stderr + chunk).slice(-2_000);
  });
  child.stdout.pipe(out, { end: false });
  child.on("error", (error) => out.destroy(error));
  child.on("close", (code) => {
    if (code === 0) out.end();
    else out.destroy(new Error(stderr.trim().split("\n").slice(-2).join(" | ") || `exit ${code}`));
  });
  return out;
}

/** The files of a snapshot of the running control plane in node container `node` (for `writeSnapshot`). */
export function nodeSnapshotFiles(
  docker: { readonly cli: string; readonly run: DockerRun },
  node: string,
): SnapshotFiles {
  return async (add) => {
    const answer = commandStream(docker.cli, ["exec", node, ...ETCD_SNAPSHOT_CURL]);
    await add(NODE_ETCD_SNAPSHOT_FILE, etcdSnapshotFromGateway(answer, `etcd of node ${node}`));
    for (const [name, path] of Object.entries(KUBEADM_PKI_FILES))
      await add(name, await docker.run(["exec", node, "cat", path]));
  };
}

/** Refuses (`ForeignSnapshot`) a snapshot whose cluster CA or service-account key is not that of node `node`. */
export async function requireNodeKeys(run: DockerRun, node: string, stored: StoredSnapshot): Promise<void> {
  for (const name of ["ca.crt", "sa.key"]) {
    const own = await run(["exec", node, "cat", KUBEADM_PKI_FILES[name] as string]);
    if (own === (await readFile(stored.path(name), "utf8").catch(() => undefined))) continue;
    throw foreignSnapshot(stored);
  }
}

/** The snapshot's keys laid out as kubeadm's pki folder, in `folder` (made), for a clone's node to start from. */
export async function writeSeedPki(stored: StoredSnapshot, folder: string): Promise<void> {
  for (const [name, path] of Object.entries(KUBEADM_PKI_FILES)) {
    const file = join(folder, relative(KUBEADM_PKI_DIRECTORY, path));
    await mkdir(dirname(file), { recursive: true, mode: 0o700 });
    await copyFile(stored.path(name), file);
    await chmod(file, name.endsWith(".key") ? 0o600 : 0o644);
  }
}

/**
 * Makes the freshly made clone in node `node` the snapshot's: its etcd rolled back to the snapshot's data (the file
 * `etcdSnapshot`), then the clone's own names put back (see {@link CLONE_SCRIPT}); returns once it serves. Called
 * again after a failure, it rolls back only if no rollback has finished yet (`<etcdSnapshot>.rolled` says one has):
 * a second rollback would undo what the clone's controllers have written since.
 */
export async function seedCloneNode(
  run: DockerRun,
  node: string,
  etcdSnapshot: string,
  etcdutl: string,
): Promise<void> {
  const rolled = `${etcdSnapshot}.rolled`;
  if (!existsSync(rolled)) {
    await rollBackNode(run, node, etcdSnapshot, etcdutl);
    await writeFile(rolled, "");
  }
  await run(["exec", node, "sh", "-c", CLONE_SCRIPT]);
  await run(["exec", node, "sh", "-c", READY_SCRIPT]);
}

/**
 * Rolls node `node`'s etcd back to the snapshot file `etcdSnapshot` (see {@link ROLLBACK_SCRIPT}) and waits until
 * kube-apiserver serves the restored data. `etcdutl` is copied into the node (the node image has none).
 */
export async function rollBackNode(
  run: DockerRun,
  node: string,
  etcdSnapshot: string,
  etcdutl: string,
): Promise<void> {
  await run(["cp", etcdSnapshot, `${node}:${NODE_RESTORE_FILE}`]);
  await run(["cp", etcdutl, `${node}:${NODE_ETCDUTL}`]);
  await run(["exec", node, "sh", "-c", ROLLBACK_SCRIPT]);
  await run(["exec", node, "sh", "-c", READY_SCRIPT]);
}
