/**
 * A kind cluster's own folder on its Docker host, as a Docker volume: what its node needs at creation (the API
 * server's authentication configuration) and what tells a later engine whose cluster it is and that its create
 * finished. Everything goes through the Docker CLI, so an engine with only the Docker socket (openMCP's kind
 * provider's deployment: a Pod, no folder shared with the host) makes clusters whose API servers start.
 *
 * Flow: the create, detached like `kind create cluster` itself ({@link createInVolumeScript}), first makes the
 * volume with the Cluster's identity as labels and writes the first configuration into it with a short container
 * of the node image, then puts the volume's host path into kind's configuration (kind's `extraMounts` take host
 * paths; kubeadm mounts it on into kube-apiserver), runs kind, and once kind succeeded writes the `created` mark
 * through the node. A step that fails fails the create, which is tried again as any failed create. Trust changes
 * later are written through the running node (`docker exec`, a rename, so kube-apiserver never reads half a file).
 *
 * Guarantees: the configuration is never passed on a command line (stdin only); a volume is only ever read or
 * removed by the kind cluster name it is named after.
 */
import type { DockerRun } from "../shared/docker-cli.ts";

/** Where, inside the node, the volume is mounted (and from there into kube-apiserver's static Pod). */
export const NODE_AUTHN_DIRECTORY = "/etc/kubernetes/openmcp-authn";

/** The file the create's wrapper writes into the volume once `kind create cluster` succeeded. */
export const CREATED_MARK = `${NODE_AUTHN_DIRECTORY}/created`;

/** Labels that say whose cluster a volume belongs to. */
export const VOLUME_LABELS = {
  uid: "engine.openmcp.cloud/cluster-uid",
  cluster: "engine.openmcp.cloud/cluster",
  kindCluster: "engine.openmcp.cloud/kind-cluster",
} as const;

/** The volume of kind cluster `cluster`. */
export const authnVolumeName = (cluster: string): string => `${cluster}-openmcp-authn`;

/** Whose cluster a volume belongs to, from its labels. */
export interface VolumeOwner {
  /** The uid the kind cluster was made for (a Cluster's, or a pool member's id). */
  readonly uid: string;
  /** `<namespace>/<name>` of the Cluster, for people. */
  readonly cluster: string;
}

/** The kind cluster volumes of one Docker host. */
export class AuthnVolumes {
  readonly #docker: DockerRun;

  constructor(docker: DockerRun) {
    this.#docker = docker;
  }

  /** Who the volume of `cluster` belongs to; undefined when there is no such volume (or it carries no owner). */
  async owner(cluster: string): Promise<VolumeOwner | undefined> {
    let labels: Record<string, string> | null;
    try {
      const out = await this.#docker([
        "volume",
        "inspect",
        "--format",
        "{{json .Labels}}",
        authnVolumeName(cluster),
      ]);
      labels = JSON.parse(out) as Record<string, string> | null;
    } catch {
      return undefined; // no such volume
    }
    const uid = labels?.[VOLUME_LABELS.uid];
    return uid ? { uid, cluster: labels?.[VOLUME_LABELS.cluster] ?? "" } : undefined;
  }

  /** Whether the create of `cluster` finished: its wrapper wrote {@link CREATED_MARK} through the node. */
  async created(cluster: string): Promise<boolean> {
    try {
      await this.#docker(["exec", nodeOf(cluster), "test", "-f", CREATED_MARK]);
      return true;
    } catch {
      return false;
    }
  }

  /** Replaces the running cluster's authentication configuration through its node; kube-apiserver reloads it. */
  async write(cluster: string, configuration: string): Promise<void> {
    const file = `${NODE_AUTHN_DIRECTORY}/authentication.yaml`;
    await this.#docker(
      [
        "exec",
        "--interactive",
        nodeOf(cluster),
        "/bin/sh",
        "-c",
        `umask 077 && cat > ${file}.tmp && mv -f ${file}.tmp ${file}`,
      ],
      configuration,
    );
  }

  /** Removes the volume of `cluster` (its node gone first: Docker keeps a volume a container uses). */
  async remove(cluster: string): Promise<void> {
    await this.#docker(["volume", "rm", "--force", authnVolumeName(cluster)]);
  }
}

/** kind's control-plane node container of `cluster`. */
export const nodeOf = (cluster: string): string => `${cluster}-control-plane`;

/** What kind's configuration says in place of the volume's host path, until the create knows it. */
export const AUTHN_ON_HOST_PLACEHOLDER = "@OPENMCP_AUTHN_ON_HOST@";

/**
 * The `sh -c` script of a create in volume mode. Its arguments: the kind CLI, the Docker CLI, the node image, the
 * first authentication configuration (a file), kind's configuration with {@link AUTHN_ON_HOST_PLACEHOLDER} and
 * where to write it filled in, the Cluster's uid and `<namespace>/<name>`, the kind cluster's name, a folder of
 * kubeadm keys to start from (a clone's, copied into the volume's `pki/`; empty: none), then kind's own arguments.
 */
export const createInVolumeScript = [
  'kind="$1"; docker="$2"; image="$3"; authn="$4"; template="$5"; config="$6"; uid="$7"; owner="$8"; cluster="$9"',
  'shift 9; pki="$1"; shift',
  'volume="$cluster-openmcp-authn"; node="$cluster-control-plane"',
  '"$docker" volume rm --force "$volume" || exit $?',
  `"$docker" volume create --label "${VOLUME_LABELS.uid}=$uid" --label "${VOLUME_LABELS.cluster}=$owner" --label "${VOLUME_LABELS.kindCluster}=$cluster" "$volume" || exit $?`,
  `"$docker" run --rm --interactive --network none --volume "$volume:/authn" --entrypoint /bin/sh "$image" -c 'umask 077 && cat > /authn/authentication.yaml' < "$authn" || exit $?`,
  // A clone's keys into the volume before kubeadm runs (it keeps a CA and service-account key it finds).
  `if [ -n "$pki" ]; then cid=$("$docker" create --network none --volume "$volume:/authn" --entrypoint /bin/true "$image") || exit $?; "$docker" cp "$pki/." "$cid:/authn/pki" || { "$docker" rm "$cid" >/dev/null; exit 1; }; "$docker" rm "$cid" >/dev/null || exit $?; fi`,
  `host_path=$("$docker" volume inspect --format '{{.Mountpoint}}' "$volume") || exit $?`,
  `case "$host_path" in /*) ;; *) echo "ERROR: docker volume inspect $volume names no host path: $host_path" >&2; exit 1 ;; esac`,
  `sed "s|${AUTHN_ON_HOST_PLACEHOLDER}|$host_path|g" "$template" > "$config" || exit $?`,
  '"$kind" "$@" || exit $?',
  `"$docker" exec "$node" touch ${CREATED_MARK}`,
].join("\n");
