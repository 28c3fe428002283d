/**
 * Records made again for kind clusters that run with none here: one this backend made and lost the record of,
 * one openMCP's kind provider made for the Cluster (taken over), one the Cluster names by annotation (adopted).
 */
import { mkdirSync } from "node:fs";
import type { ClusterTarget } from "../../api/backend.ts";
import { CLUSTER_LABELS } from "../../api/constants/cluster.ts";
import type { Logger } from "../../api/logger.ts";
import { writeFileAtomicallySync } from "../../util/atomic-file.ts";
import { describeCluster } from "../shared/error-wording.ts";
import type { AuthnVolumes } from "./authn-volume.ts";
import type { KindCli } from "./commands.ts";
import { KIND_NAME_ANNOTATION, kindClusterNameOf } from "./names.ts";
import type { ClusterFolders, KindRecord } from "./state-folder.ts";

/** What recovery looks through and writes to. */
export interface RecoveryTools {
  readonly cli: KindCli;
  /** The clusters' volumes, in volume mode. */
  readonly volumes: AuthnVolumes | undefined;
  readonly folders: ClusterFolders;
  readonly log: Logger;
}

/** The Kubernetes version a node image names (`kindest/node:v1.34.0`), if it names one. */
const versionOfImage = (image: string): string | undefined => image.match(/:v(\d+\.\d+\.\d+)$/)?.[1];

/**
 * The record of a kind cluster that runs with none here (the state folder is lost with an engine's Pod, and
 * nothing else is shared with the host in openMCP's deployment), made again from Docker and written here:
 * - its volume names `owner` (the target's uid, or its pool member's): this backend made it; its create
 *   finished if the create marked the volume, else it is taken for interrupted (made again, as any interrupted create);
 * - no volume of ours, and its name is the one openMCP's kind provider gives this Cluster
 *   (`<name>.<uid prefix>`): that provider made it; it is taken over as it runs, never re-created;
 * - else: undefined (another's; `create` refuses to touch it).
 */
export async function recoverRecord(
  tools: RecoveryTools,
  target: ClusterTarget,
  cluster: string,
  owner: string,
): Promise<KindRecord | undefined> {
  const { cli, volumes, folders, log } = tools;
  if (!(await cli.listClusters()).includes(cluster)) return undefined;
  const labelled = await volumes?.owner(cluster);
  const image = await cli.nodeImage(cluster);
  const version = versionOfImage(image) ?? target.labels?.[CLUSTER_LABELS.k8sVersion] ?? "unknown";
  mkdirSync(folders.folder(cluster), { recursive: true });
  const finished = () => writeFileAtomicallySync(folders.exitFile(cluster, "create"), "0\n");
  if (labelled) {
    if (labelled.uid !== owner) return undefined;
    const created = await (volumes as AuthnVolumes).created(cluster);
    if (created) finished();
    folders.writeRecord(target, cluster, { version, image, pid: 0, oidc: true, authn: "volume" });
    log.info(
      created
        ? "kind cluster found with no record here: its volume says this backend made it"
        : "kind cluster found with no record here and its create unfinished: it is made again",
      { cluster, target: describeCluster(target) },
    );
    return folders.readRecord(cluster);
  }
  if (target.annotations?.[KIND_NAME_ANNOTATION] !== undefined) return undefined; // adopted by create
  if (cluster !== kindClusterNameOf(target.name, target.uid)) return undefined;
  finished();
  folders.writeRecord(target, cluster, { version, image, pid: 0, takenOver: true });
  log.info("kind cluster taken over: it runs under the name openMCP's kind provider gives this Cluster", {
    cluster,
    version,
    target: describeCluster(target),
  });
  return folders.readRecord(cluster);
}

/** Records a running kind cluster it did not make, at the version its node image says (else the one asked). */
export async function adoptCluster(
  tools: RecoveryTools,
  target: ClusterTarget,
  cluster: string,
  asked: string,
): Promise<void> {
  const image = await tools.cli.nodeImage(cluster);
  const version = versionOfImage(image) ?? asked;
  mkdirSync(tools.folders.folder(cluster), { recursive: true });
  tools.folders.writeRecord(target, cluster, { version, image: image || "adopted", pid: 0, adopted: true });
  tools.log.info("kind cluster adopted", { cluster, version, target: describeCluster(target) });
}
