/** What a kind cluster is made from: its node image, kind's cluster configuration, the node images at hand. */
import { isAbsolute } from "node:path";
import { stringify } from "yaml";
import type { SupportedVersion } from "../../api/cluster-profile.ts";
import type { JsonObject } from "../../api/common.ts";
import { NODE_AUTHN_DIRECTORY } from "./authn-volume.ts";

/** The node image for `version`: `settings.images[version]` if the ProviderConfig maps it, else `kindest/node:v<version>`. */
export function kindNodeImage(
  version: string,
  settings: JsonObject | undefined,
  providerConfig = "",
): string {
  const images = settings?.images;
  if (images === undefined) return `kindest/node:v${version}`;
  const where = providerConfig ? `ProviderConfig ${providerConfig}: ` : "";
  if (typeof images !== "object" || images === null || Array.isArray(images)) {
    throw new Error(
      `${where}settings.images must map versions to node images, e.g. { "1.34.0": "kindest/node:v1.34.0" }`,
    );
  }
  const image = (images as JsonObject)[version];
  if (image === undefined) return `kindest/node:v${version}`;
  if (typeof image !== "string" || image.trim() === "") {
    throw new Error(
      `${where}settings.images["${version}"] must be a node image name, e.g. kindest/node:v${version}`,
    );
  }
  return image;
}

/** A folder or file of the Docker host mounted into a kind node (kind's `extraMounts`). */
export interface KindExtraMount {
  readonly hostPath: string;
  readonly containerPath: string;
  readonly readOnly?: boolean;
}

/**
 * `settings.extraMounts` of a kind ProviderConfig: host paths mounted into the node of each cluster made from
 * it, e.g. a landscape's platform cluster, whose engine drives sibling kind clusters through the host's
 * Docker socket. Absolute paths only; a ProviderConfig is an administrator's object, so its mounts are trusted.
 */
export function kindExtraMounts(settings: JsonObject | undefined, providerConfig = ""): KindExtraMount[] {
  const mounts = settings?.extraMounts;
  if (mounts === undefined) return [];
  const where = providerConfig ? `ProviderConfig ${providerConfig}: ` : "";
  const example = "[{ hostPath: /var/run/docker.sock, containerPath: /var/run/host-docker.sock }]";
  if (!Array.isArray(mounts)) throw new Error(`${where}settings.extraMounts must be a list, e.g. ${example}`);
  return mounts.map((mount, index) => {
    const fields =
      typeof mount === "object" && mount !== null && !Array.isArray(mount) ? (mount as JsonObject) : {};
    const { hostPath, containerPath, readOnly } = fields;
    if (
      typeof hostPath !== "string" ||
      !isAbsolute(hostPath) ||
      typeof containerPath !== "string" ||
      !isAbsolute(containerPath)
    )
      throw new Error(
        `${where}settings.extraMounts[${index}] needs an absolute hostPath and containerPath, e.g. ${example}`,
      );
    if (readOnly !== undefined && typeof readOnly !== "boolean")
      throw new Error(`${where}settings.extraMounts[${index}].readOnly must be true or false`);
    return { hostPath, containerPath, ...(readOnly ? { readOnly } : {}) };
  });
}

/**
 * kind's cluster configuration for one cluster whose OIDC trust lives in `authnDirectory` on the Docker host
 * (the volume's host path in volume mode, the state folder's `authn/` in folder mode): the folder is mounted
 * into the control-plane node and from there into the kube-apiserver static Pod, which runs with
 * `--authentication-config` (structured authentication configuration). kube-apiserver reloads the file when it
 * changes, so trust changes need no restart. The folder is mounted, not the file: an atomic rename into a
 * mounted folder is seen inside; a file mount would keep the old inode. `writable`: the node may write into it
 * (volume mode writes through the node).
 */
export function kindClusterConfig(
  authnDirectory: string,
  extraMounts: readonly KindExtraMount[] = [],
  writable = false,
): string {
  const apiServerPatch = stringify({
    kind: "ClusterConfiguration",
    apiServer: {
      extraArgs: { "authentication-config": `${NODE_AUTHN_DIRECTORY}/authentication.yaml` },
      extraVolumes: [
        {
          name: "openmcp-authn",
          hostPath: NODE_AUTHN_DIRECTORY,
          mountPath: NODE_AUTHN_DIRECTORY,
          readOnly: true,
          pathType: "Directory",
        },
      ],
    },
  });
  return stringify({
    kind: "Cluster",
    apiVersion: "kind.x-k8s.io/v1alpha4",
    nodes: [
      {
        role: "control-plane",
        extraMounts: [
          {
            hostPath: authnDirectory,
            containerPath: NODE_AUTHN_DIRECTORY,
            ...(writable ? {} : { readOnly: true }),
          },
          ...extraMounts,
        ],
        kubeadmConfigPatches: [apiServerPatch],
      },
    ],
  });
}

/**
 * The versions of the `kindest/node:v<X.Y.Z>` images a Docker engine holds, newest first, from the output
 * of `docker image ls --format '{{.Repository}}:{{.Tag}}'`. Other images and tags are ignored, and so are 1.x
 * images newer than `newestMinor` (see {@link newestMinorKindCreates}): offered, their Clusters would all fail.
 */
export function localNodeImageVersions(imageList: string, newestMinor?: number): SupportedVersion[] {
  const versions = new Set<string>();
  for (const line of imageList.split("\n")) {
    const match = /^(?:docker\.io\/)?kindest\/node:v(\d+)\.(\d+)\.(\d+)$/.exec(line.trim());
    if (!match) continue;
    if (newestMinor !== undefined && Number(match[1]) === 1 && Number(match[2]) > newestMinor) continue;
    versions.add(`${match[1]}.${match[2]}.${match[3]}`);
  }
  const key = (version: string) => version.split(".").map(Number);
  return [...versions]
    .sort((a, b) => {
      const [x, y] = [key(a), key(b)];
      for (let i = 0; i < 3; i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (y[i] ?? 0) - (x[i] ?? 0);
      return 0;
    })
    .map((version) => ({ version }));
}

/**
 * The newest Kubernetes 1.x minor the kind whose `kind version` printed `output` can create; undefined when no
 * limit is known. kind up to v0.30 writes kubeadm's `v1beta3` configuration, which kubeadm refuses from 1.37 on
 * ("your configuration file uses an old API spec"): its newest is 1.36.
 */
export function newestMinorKindCreates(output: string): number | undefined {
  const match = /\bv0\.(\d+)\.\d+/.exec(output);
  return match && Number(match[1]) <= 30 ? 36 : undefined;
}
