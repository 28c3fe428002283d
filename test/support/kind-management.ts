/**
 * The kind management cluster of a heavy file that runs the engine's image in Pods: made in `beforeAll` with the
 * image of this tree loaded (under the tag the file's manifests name), and, in the Docker-socket mode a kind
 * backend in a Pod needs, the host's Docker socket and a state folder mounted (the state folder at one path on the
 * Docker host, in the node and in the Pods: kind mounts each cluster's `authn/` folder from there). In `afterAll`,
 * whatever happened: the kind clusters the engine made from its Pods (their node containers: the engine that would
 * delete them goes with the management cluster), the management cluster, the folders.
 *
 * Call it at a file's top level, before the file's own hooks, which then find the cluster made.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import {
  containerToolchain,
  createKindCluster,
  docker,
  type KindExtraMount,
  removeContainersQuietly,
  type TestKindCluster,
} from "./containers.ts";

/** The repository's root, for the manifests a file applies. */
export const REPO_ROOT = join(import.meta.dirname, "..", "..");

/** Where the host's Docker socket appears in the node (hostPath volumes of the Pods mount it from there). */
export const NODE_DOCKER_SOCKET = "/var/run/host-docker.sock";

export interface KindManagementOptions {
  /** The tag the image of this tree is loaded under; its toolchain name when absent. */
  readonly image?: string;
  /** Mount the host's Docker socket and a state folder of {@link KindManagement.state} into the node. */
  readonly dockerSocket?: boolean;
}

/** The management cluster (once `beforeAll` made it), with the file's folders. */
export interface KindManagement extends Omit<TestKindCluster, "delete"> {
  /** A folder of the file's own (manifests, kubeconfigs), removed at the end. */
  readonly work: string;
  /** The engine's state folder in the Docker-socket mode (writable by the Pods' uid 1000); "" otherwise. */
  readonly state: string;
  /** Name prefixes of the containers the engine made from its Pods, removed at the end. */
  readonly made: string[];
  /**
   * `kubectl apply` of `objects` as a List (kept in the work folder as `<name>.json`); server-side where an object
   * is too large for a client-side apply's annotation (CRDs), as clusterctl applies.
   */
  apply(
    name: string,
    objects: readonly unknown[],
    options?: { readonly serverSide?: boolean },
  ): Promise<void>;
  /** Waits until the Job `job` of `namespace` is complete. */
  jobComplete(namespace: string, job: string): Promise<void>;
}

/** Declares the file's management cluster `name` (see the module's comment). */
export function kindManagement(name: string, options: KindManagementOptions = {}): KindManagement {
  const work = mkdtempSync(join(tmpdir(), `${name}-`));
  const state = options.dockerSocket ? mkdtempSync(join(tmpdir(), `${name}-state-`)) : "";
  const made: string[] = [];
  let cluster: TestKindCluster | undefined;

  beforeAll(async () => {
    const tools = containerToolchain();
    const mounts: KindExtraMount[] = [];
    if (state) {
      chmodSync(state, 0o777);
      mounts.push(
        { hostPath: "/var/run/docker.sock", containerPath: NODE_DOCKER_SOCKET },
        { hostPath: state, containerPath: state },
      );
    }
    cluster = await createKindCluster(name, mounts);
    const image = options.image ?? tools.engineImage;
    if (image !== tools.engineImage) await docker("tag", tools.engineImage, image);
    await cluster.loadImage(image);
  }, 900_000);

  afterAll(async () => {
    await removeContainersQuietly(made);
    await cluster?.delete();
    rmSync(work, { recursive: true, force: true });
    if (state) rmSync(state, { recursive: true, force: true });
  }, 300_000);

  const current = (): TestKindCluster => {
    if (!cluster) throw new Error(`the kind management cluster ${name} was not made`);
    return cluster;
  };
  return {
    name,
    get kubeconfigPath() {
      return current().kubeconfigPath;
    },
    get kubeConfig() {
      return current().kubeConfig;
    },
    kubectl: (...args) => current().kubectl(...args),
    loadImage: (image) => current().loadImage(image),
    async apply(listName, objects, applyOptions = {}) {
      const file = join(work, `${listName}.json`);
      writeFileSync(file, JSON.stringify({ apiVersion: "v1", kind: "List", items: objects }));
      const serverSide = applyOptions.serverSide ? ["--server-side", "--force-conflicts"] : [];
      await current().kubectl("apply", ...serverSide, "-f", file);
    },
    async jobComplete(namespace, job) {
      await current().kubectl(
        "-n",
        namespace,
        "wait",
        "--for=condition=complete",
        `job/${job}`,
        "--timeout=300s",
      );
    },
    work,
    state,
    made,
  };
}
