/**
 * Starts one `kind create cluster` detached (it blocks until the cluster is up, minutes), through the wrapper that
 * records its exit status in the cluster's folder, so any later instance of the backend reads how it ended.
 */
import { mkdirSync, rmSync } from "node:fs";
import type { ClusterTarget } from "../../api/backend.ts";
import { writeFileAtomicallySync } from "../../util/atomic-file.ts";
import { startDetached } from "../../util/detached-process.ts";
import { authenticationConfig } from "../shared/authentication-config.ts";
import { describeCluster } from "../shared/error-wording.ts";
import { AUTHN_ON_HOST_PLACEHOLDER, createInVolumeScript } from "./authn-volume.ts";
import { type KindExtraMount, kindClusterConfig } from "./cluster-config.ts";
import type { ClusterFolders } from "./state-folder.ts";

/** A create to start (or waiting for a slot). */
export interface CreateOrder {
  readonly target: ClusterTarget;
  readonly cluster: string;
  readonly version: string;
  readonly image: string;
  readonly extraMounts: readonly KindExtraMount[];
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
  /** The volume mode: the node's `authn` folder is a Docker volume the create makes, labelled `owner`. */
  readonly volume?: { readonly owner: string };
  /** kind's `--wait`. */
  readonly waitMs: number;
}

/**
 * Starts the create of `order` in a fresh folder (what a previous create of the Cluster left goes) and returns
 * its wrapper's pid. The node's first authentication configuration trusts no issuer: kube-apiserver refuses
 * to start without the file.
 */
export function startCreate(order: CreateOrder, tools: CreateTools): number {
  const { target, cluster, image } = order;
  const { folders } = tools;
  rmSync(folders.folder(cluster), { recursive: true, force: true });
  const authn = folders.path(cluster, "authn");
  mkdirSync(authn, { recursive: true });
  writeFileAtomicallySync(folders.path(cluster, "authn/authentication.yaml"), authenticationConfig([]));
  const config = folders.path(cluster, "kind-config.yaml");
  const kindArgs = [
    "create",
    "cluster",
    "--name",
    cluster,
    "--image",
    image,
    "--config",
    config,
    "--kubeconfig",
    folders.path(cluster, "kubeconfig"),
    "--wait",
    `${Math.ceil(tools.waitMs / 1000)}s`,
  ];
  let command = tools.kind;
  let args = kindArgs;
  if (tools.volume) {
    // The volume's host path is known only once the create made it: the script fills it into the config.
    const template = folders.path(cluster, "kind-config.template.yaml");
    writeFileAtomicallySync(template, kindClusterConfig(AUTHN_ON_HOST_PLACEHOLDER, order.extraMounts, true));
    command = "/bin/sh";
    args = [
      "-c",
      createInVolumeScript,
      "omc-kind-create-in-volume",
      tools.kind,
      tools.docker,
      image,
      folders.path(cluster, "authn/authentication.yaml"),
      template,
      config,
      tools.volume.owner,
      `${target.namespace}/${target.name}`,
      cluster,
      ...kindArgs,
    ];
  } else {
    writeFileAtomicallySync(config, kindClusterConfig(authn, order.extraMounts));
  }
  const { pid } = startDetached({
    command,
    args,
    stdout: folders.path(cluster, "create.stdout"),
    stderr: folders.path(cluster, "create.stderr"),
    truncate: true,
    exitStatus: { exitFile: folders.exitFile(cluster, "create"), marker: "omc-kind-create" },
  });
  if (pid === undefined)
    throw new Error(`could not start kind create cluster for ${describeCluster(target)}`);
  return pid;
}
