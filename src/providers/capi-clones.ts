/**
 * CAPI Clusters made from a snapshot (contract 1.7's clone) on Cluster API's Docker machines, in two steps the engine
 * orders as creates:
 * 1. Before the CAPI Cluster exists: the snapshot is checked (a foreign or altered one is refused, nothing made) and
 *    staged here, and its certificate authorities and service-account keys are written as the Secrets Cluster API
 *    looks up before it generates its own (`<cluster>-ca`, `-etcd`, `-sa`, `-proxy`, of Cluster API's own Secret
 *    type, which the KubeadmControlPlane then owns, so they go with the Cluster). kubeadm starts the clone with them.
 * 2. Once Cluster API has the clone ready: its control-plane machine's etcd is rolled back to the snapshot's data and
 *    the clone's own names put back (shared/kubeadm-node-snapshots.ts), then kubelet restarted in its other machines
 *    so they register again (the restored data knows only the original's Nodes), and each Node given what CAPD and
 *    kubeadm gave it when it was made (see {@link NODES_SCRIPT}). Until then `observe` says the clone is still being
 *    made.
 * Each step is safe to run again: a staged clone stays staged across a restart, Secrets that exist are kept.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { copyFile } from "node:fs/promises";
import { join } from "node:path";
import type { V1Secret } from "@kubernetes/client-node";
import { CAPI_LABELS, CAPI_SECRET_TYPE } from "../api/cluster-api.ts";
import type { SnapshotReference } from "../api/control-plane-snapshot.ts";
import { isConflict } from "../api/error-message.ts";
import type { Management } from "./capi-records.ts";
import type { DockerMachine } from "./capi-sleep.ts";
import type { DockerRun } from "./shared/docker-cli.ts";
import {
  KUBEADM_PKI_FILES,
  NODE_ETCD_SNAPSHOT_FILE,
  seedCloneNode,
} from "./shared/kubeadm-node-snapshots.ts";
import { readOwnSnapshot } from "./shared/snapshot-store.ts";

/** Cluster API's Secret of each key pair (`<cluster>-<purpose>`), from the snapshot's files. */
const CAPI_KEY_SECRETS: Readonly<Record<string, { readonly crt: string; readonly key: string }>> = {
  ca: { crt: "ca.crt", key: "ca.key" },
  etcd: { crt: "etcd-ca.crt", key: "etcd-ca.key" },
  sa: { crt: "sa.pub", key: "sa.key" },
  proxy: { crt: "front-proxy-ca.crt", key: "front-proxy-ca.key" },
};

/**
 * What the clone's Nodes had before the rollback, given again to the Nodes its kubelets register after it (the restored
 * data holds the original's Nodes, not these): each Node's `spec.providerID`, by which Cluster API finds a Machine's
 * Node (CAPD sets it once, when it provisions the machine; without it the Machines stay not Ready, "cannot find node
 * with matching ProviderID"), and the control-plane label and taint of kubeadm's mark-control-plane phase (a
 * control-plane Machine is not Ready without them), from the machine's own kubeadm configuration. Run in the
 * control-plane machine with the Nodes' names (CAPD names a machine's Node and container alike) as arguments.
 */
const NODES_SCRIPT = `set -eu
export KUBECONFIG=/etc/kubernetes/admin.conf
for node in "$@"; do
  i=0
  until kubectl get node "$node" >/dev/null 2>&1; do
    i=$((i + 1)); [ $i -le 180 ] || { echo "Node $node did not register again within 180 s of the restore" >&2; exit 1; }
    sleep 1
  done
  [ -n "$(kubectl get node "$node" -o jsonpath='{.spec.providerID}')" ] ||
    kubectl patch node "$node" --type=merge -p '{"spec":{"providerID":"docker:////'"$node"'"}}' >/dev/null
done
if [ -f /run/kubeadm/kubeadm.yaml ]; then
  kubeadm init phase mark-control-plane --config /run/kubeadm/kubeadm.yaml >/dev/null
else
  kubeadm init phase mark-control-plane --node-name "$(hostname)" >/dev/null
fi
`;

/** Marks a staged clone (the snapshot's name inside). */
const STAGED = "staged";

export class CapiClones {
  readonly #folder: string;
  readonly #staging: string;

  /** Clones are staged under `folder`; snapshots in an object store are read through `staging`. */
  constructor(folder: string, staging: string) {
    this.#folder = folder;
    this.#staging = staging;
  }

  /** Whether the clone of Cluster `uid` still waits for the snapshot's data. */
  pending(uid: string): boolean {
    return existsSync(join(this.#at(uid), STAGED));
  }

  /**
   * Step 1: checks and stages snapshot `reference` for the clone of Cluster `uid` (once), and writes its key pairs as
   * CAPI Cluster `name`'s Secrets in `namespace` of the management cluster.
   */
  async prepare(
    uid: string,
    reference: SnapshotReference,
    management: Management,
    namespace: string,
    name: string,
  ): Promise<void> {
    const folder = this.#at(uid);
    if (!this.pending(uid)) {
      const stored = await readOwnSnapshot(reference, "capi", this.#staging);
      try {
        rmSync(folder, { recursive: true, force: true });
        mkdirSync(folder, { recursive: true, mode: 0o700 });
        for (const file of [NODE_ETCD_SNAPSHOT_FILE, ...Object.keys(KUBEADM_PKI_FILES)])
          await copyFile(stored.path(file), join(folder, file));
        writeFileSync(join(folder, STAGED), `${reference.name}\n`);
      } finally {
        await stored.release();
      }
    }
    for (const [purpose, files] of Object.entries(CAPI_KEY_SECRETS)) {
      const body: V1Secret = {
        metadata: { name: `${name}-${purpose}`, namespace, labels: { [CAPI_LABELS.clusterName]: name } },
        type: CAPI_SECRET_TYPE,
        data: {
          "tls.crt": readFileSync(join(folder, files.crt)).toString("base64"),
          "tls.key": readFileSync(join(folder, files.key)).toString("base64"),
        },
      };
      try {
        await management.core.createNamespacedSecret({ namespace, body });
      } catch (error) {
        if (isConflict(error)) continue; // written by an earlier try (or Cluster API's own): kept
        throw management.error(`writing Secret ${namespace}/${body.metadata?.name}`, error);
      }
    }
  }

  /**
   * Step 2: the made clone of Cluster `uid` given the snapshot's data in its control-plane machine `controlPlane`,
   * then kubelet restarted in its `others` and every Node given its provider id and kubeadm's marks again; the
   * staging goes.
   */
  async finish(
    uid: string,
    run: DockerRun,
    etcdutl: string,
    controlPlane: string,
    others: readonly DockerMachine[],
  ): Promise<void> {
    const folder = this.#at(uid);
    await seedCloneNode(run, controlPlane, join(folder, NODE_ETCD_SNAPSHOT_FILE), etcdutl);
    const nodes = others.filter((m) => m.running && m.role !== "external-load-balancer").map((m) => m.name);
    for (const node of nodes) await run(["exec", node, "systemctl", "restart", "kubelet"]);
    await run(["exec", controlPlane, "sh", "-c", NODES_SCRIPT, "sh", controlPlane, ...nodes]);
    rmSync(folder, { recursive: true, force: true });
  }

  /** Drops a staged clone whose Cluster is deleted before it was made. */
  forget(uid: string): void {
    rmSync(this.#at(uid), { recursive: true, force: true });
  }

  #at(uid: string): string {
    return join(this.#folder, uid);
  }
}
