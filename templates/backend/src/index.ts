/**
 * __PACKAGE_NAME__: a backend for openmcp-engine. The engine watches Clusters, keeps their status, versions,
 * finalizers and Events; this module only makes, reports on and removes the clusters themselves.
 *
 * As generated it drives an in-memory stand-in for infrastructure (in-memory-cloud.ts) and passes the
 * conformance kit (test/conformance.test.ts). Change the calls to `this.cloud` into calls to your
 * infrastructure, keep the kit passing, and run the engine with `--backend __PACKAGE_NAME__`.
 */
import type {
  BackendContext,
  BackendContractVersion,
  BackendFactory,
  Clock,
  ClusterBackend,
  ClusterObservation,
  ClusterTarget,
  ProviderConfig,
  SupportedVersion,
} from "openmcp-engine/backend";
import { type CloudCluster, cloudFor, type InMemoryCloud } from "./in-memory-cloud.ts";

/** The backend contract this backend was built for: the engine refuses to load it if it implements an incompatible one. */
export const contractVersion: BackendContractVersion = "__CONTRACT_VERSION__";

/** The tag that ties a cluster to its Cluster object: the object's uid, which a re-created object changes. */
const CLUSTER_UID_TAG = "openmcp.cloud/cluster-uid";

/** What a ProviderConfig yields when it lists no versions. */
const DEFAULT_VERSIONS: readonly SupportedVersion[] = [{ version: "1.34.2" }, { version: "1.35.1" }];

export class __CLASS_NAME__ implements ClusterBackend {
  /** ProviderConfigs name it as `spec.backend`. */
  readonly name = "__BACKEND_NAME__";
  readonly capabilities = { adminAccess: false, oidc: false };
  readonly cloud: InMemoryCloud;
  readonly #clock: Clock;

  constructor(context: BackendContext) {
    this.#clock = context.clock;
    this.cloud = cloudFor(context.stateDirectory, readyAfterMs(context.options));
  }

  supportedVersions(config: ProviderConfig): readonly SupportedVersion[] {
    return config.spec.supportedVersions?.length ? config.spec.supportedVersions : DEFAULT_VERSIONS;
  }

  traits(config: ProviderConfig): readonly string[] {
    return config.spec.traits ?? [];
  }

  /** Read only: what the infrastructure says about the Cluster's cluster. */
  async observe(target: ClusterTarget): Promise<ClusterObservation> {
    const cluster = this.#find(target);
    if (!cluster) return { exists: false };
    const { version } = cluster;
    switch (cluster.state) {
      case "creating":
        return { exists: true, phase: "provisioning", version };
      case "updating":
        return { exists: true, phase: "updating", version };
      case "deleting":
        return { exists: true, phase: "deleting", version };
      case "running":
        return { exists: true, phase: "ready", version, endpoint: endpointOf(cluster), info: cluster.id };
    }
  }

  async create(target: ClusterTarget, version: string): Promise<void> {
    if (this.#find(target)) return; // idempotent: one cluster per Cluster object, also after a restart
    this.cloud.create({ [CLUSTER_UID_TAG]: target.uid }, version, this.#clock.now());
  }

  async update(target: ClusterTarget, version: string): Promise<void> {
    const cluster = this.#find(target);
    if (!cluster)
      throw new Error(`no cluster for Cluster ${target.namespace}/${target.name} to update to ${version}`);
    this.cloud.update(cluster.id, version, this.#clock.now());
  }

  async delete(target: ClusterTarget): Promise<void> {
    const cluster = this.#find(target);
    if (cluster) this.cloud.delete(cluster.id, this.#clock.now()); // absent: already deleted, which succeeds
  }

  /** These clusters are not real API servers, so there is no admin access to give (capabilities say so). */
  async adminAccess(): Promise<undefined> {
    return undefined;
  }

  #find(target: ClusterTarget): CloudCluster | undefined {
    return this.cloud.find(CLUSTER_UID_TAG, target.uid, this.#clock.now())[0];
  }
}

/** Where the cluster's API server would be; never a credential. */
const endpointOf = (cluster: CloudCluster) => `https://${cluster.id}.clusters.example.invalid`;

/** `--backend-option readyAfterMs=<n>`: how long the stand-in takes to make, update or remove a cluster. */
function readyAfterMs(options: Readonly<Record<string, string>>): number {
  const text = options.readyAfterMs ?? "200";
  const ms = Number(text);
  if (!Number.isInteger(ms) || ms < 0)
    throw new Error(
      `__BACKEND_NAME__: --backend-option readyAfterMs="${text}" must be a whole number of milliseconds`,
    );
  return ms;
}

/** What the engine calls to make the backend (`--backend __PACKAGE_NAME__`). */
export const createBackend: BackendFactory = (context) => new __CLASS_NAME__(context);
