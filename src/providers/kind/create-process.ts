/**
 * Starts one `kind create cluster` detached (it blocks until the cluster is up, minutes), through the wrapper that
 * records its exit status in the cluster's folder, so any later instance of the backend reads how it ended.
 */
import { cpSync, mkdirSync, rmSync } from "node:fs";
import type { ClusterTarget } from "../../api/backend.ts";
import { writeFileAtomicallySync } from "../../util/atomic-file.ts";
import { startDetached } from "../../util/detached-process.ts";
import { authenticationConfig } from "../shared/authentication-config.ts";
import { describeCluster } from "../shared/error-wording.ts";
import { KUBEADM_PKI_DIRECTORY } from "../shared/kubeadm-node-snapshots.ts";
import { AUTHN_ON_HOST_PLACEHOLDER, createInVolumeScript } from "./authn-volume.ts";
import { type KindExtraMount, kindClusterConfig } from "./cluster-config.ts";
import type { ClusterFolders, RecordFields } from "./state-folder.ts";

/** A create to start (or waiting for a slot). */
export interface CreateOrder {
  readonly target: ClusterTarget;
  readonly cluster: string;
  readonly version: string;
  readonly image: string;
  readonly extraMounts: readonly KindExtraMount[];
  /**
   * A clone's (contract 1.7): a folder laid out as kubeadm's `/etc/kubernetes/pki` with the snapshot's CAs and
   * service-account key, which the node starts from (kubeadm keeps the keys it finds and makes the rest).
   */
  readonly seedPki?: string;
  /** From 1. */
  readonly attempt: number;
  readonly lastFailure?: string;
}

/** What a create runs with. */
export interface CreateTools {
  readonly folders: ClusterFolders;
  readonly kind: string;
  /** The Docker CLI, for a create whose node reads its authentication configuration from a Docker volume. */
  readonly docker: string;
  /** The volume mode: the node's `authn` folder is a Docker volume the create makes, labelled with `uid` (the Cluster's, or its pool member's). */
  readonly volume?: { readonly uid: string };
  /** kind's `--wait`. */
  readonly waitMs: number;
}

/**
 * Starts the create of `order` in a fresh folder (what a previous create of the Cluster left goes), records it,
 * and returns its wrapper's pid.
 */
export function startCreate(order: CreateOrder, tools: CreateTools): number {
  const { folders } = tools;
  const { cluster } = order;
  rmSync(folders.folder(cluster), { recursive: true, force: true });
  const { command, args } = createCommand(order, tools);
  const { pid } = startDetached({
    command,
    args,
    stdout: folders.path(cluster, "create.stdout"),
    stderr: folders.path(cluster, "create.stderr"),
    truncate: true,
    exitStatus: { exitFile: folders.exitFile(cluster, "create"), marker: "omc-kind-create" },
  });
  if (pid === undefined)
    throw new Error(`could not start kind create cluster for ${describeCluster(order.target)}`);
  const authn = tools.volume ? { authn: "volume" as const } : {};
  folders.writeRecord(order.target, cluster, { ...recordOf(order, pid), oidc: true, ...authn });
  return pid;
}

/** Records the create of `order` as waiting for a slot: no process yet. */
export function recordQueued(order: CreateOrder, folders: ClusterFolders): void {
  mkdirSync(folders.folder(order.cluster), { recursive: true });
  folders.writeRecord(order.target, order.cluster, { ...recordOf(order, 0), queued: true });
}

/** What the record of the create of `order` says, its wrapper `pid`. */
function recordOf(order: CreateOrder, pid: number): RecordFields {
  const { version, image, attempt, lastFailure } = order;
  return { version, image, pid, attempt, ...(lastFailure === undefined ? {} : { lastFailure }) };
}

/**
 * The create's command line, its files written: the node's first authentication configuration (trusting no
 * issuer: kube-apiserver refuses to start without the file) and kind's configuration, which in volume mode the
 * command completes once it made the volume.
 */
function createCommand(order: CreateOrder, tools: CreateTools): { command: string; args: string[] } {
  const { target, cluster, image, extraMounts } = order;
  const { folders } = tools;
  const authn = folders.path(cluster, "authn");
  mkdirSync(authn, { recursive: true });
  writeFileAtomicallySync(folders.path(cluster, "authn/authentication.yaml"), authenticationConfig([]));
  const config = folders.path(cluster, "kind-config.yaml");
  const kindArgs = ["create", "cluster", "--name", cluster, "--image", image, "--config", config];
  kindArgs.push(
    "--kubeconfig",
    folders.path(cluster, "kubeconfig"),
    "--wait",
    `${Math.ceil(tools.waitMs / 1000)}s`,
  );
  const pkiMount = (hostPath: string) =>
    order.seedPki ? [{ hostPath, containerPath: KUBEADM_PKI_DIRECTORY }] : [];
  if (!tools.volume) {
    // The clone's keys in its own folder, where kubeadm adds the rest: the node's pki for its whole life.
    const pki = folders.path(cluster, "pki");
    if (order.seedPki) cpSync(order.seedPki, pki, { recursive: true });
    writeFileAtomicallySync(config, kindClusterConfig(authn, [...extraMounts, ...pkiMount(pki)]));
    return { command: tools.kind, args: kindArgs };
  }
  // The volume's host path is known only once the create made it: the script fills it into the config.
  const template = folders.path(cluster, "kind-config.template.yaml");
  const mounts = [...extraMounts, ...pkiMount(`${AUTHN_ON_HOST_PLACEHOLDER}/pki`)];
  writeFileAtomicallySync(template, kindClusterConfig(AUTHN_ON_HOST_PLACEHOLDER, mounts, true));
  const owner = `${target.namespace}/${target.name}`;
  const script = [createInVolumeScript, "omc-kind-create-in-volume", tools.kind, tools.docker, image];
  const files = [folders.path(cluster, "authn/authentication.yaml"), template, config];
  return {
    command: "/bin/sh",
    args: ["-c", ...script, ...files, tools.volume.uid, owner, cluster, order.seedPki ?? "", ...kindArgs],
  };
}
