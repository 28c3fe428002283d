/** An example backend: each cluster is a JSON file in the state folder. Complete, small, and it passes the kit. */
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ClusterObservation, ClusterTarget } from "../../src/api/backend.ts";
import type {
  BackendContext,
  BackendContractVersion,
  BackendFactory,
  ClusterBackend,
} from "../../src/api/backend-contract.ts";
import type { ProviderConfig } from "../../src/api/provider-config.ts";

/** What the backend stores per cluster. A real backend would store its cloud's cluster id here. */
interface StoredCluster {
  version: string;
  /** When the "cloud" started building it; the cluster is ready `readyAfterMs` later. */
  since: number;
  deleting: boolean;
}

class FileBackend implements ClusterBackend {
  readonly name = "file";
  readonly capabilities = { adminAccess: false, oidc: false };
  readonly #folder: string;
  readonly #context: BackendContext;
  readonly #readyAfterMs: number;

  constructor(context: BackendContext) {
    this.#context = context;
    this.#folder = join(context.stateDirectory, "clusters");
    this.#readyAfterMs = Number(context.options.readyAfterMs ?? 50);
  }

  supportedVersions(config: ProviderConfig) {
    return config.spec.supportedVersions ?? [{ version: "1.33.3" }, { version: "1.34.2" }];
  }

  traits(config: ProviderConfig) {
    return config.spec.traits ?? [];
  }

  async observe(target: ClusterTarget): Promise<ClusterObservation> {
    const record = await this.#read(target);
    if (!record) return { exists: false };
    const done = this.#context.clock.now() - record.since >= this.#readyAfterMs;
    if (record.deleting)
      return done ? { exists: false } : { exists: true, phase: "deleting", version: record.version };
    if (!done) return { exists: true, phase: "provisioning", version: record.version };
    return {
      exists: true,
      phase: "ready",
      version: record.version,
      endpoint: `https://${target.uid}.file.invalid`,
    };
  }

  async create(target: ClusterTarget, version: string): Promise<void> {
    if (await this.#read(target)) return; // idempotent: one cluster per Cluster uid
    await this.#write(target, { version, since: this.#context.clock.now(), deleting: false });
  }

  async update(target: ClusterTarget, version: string): Promise<void> {
    const record = await this.#read(target);
    if (!record) throw new Error(`no cluster for ${target.namespace}/${target.name} to update`);
    if (record.version !== version)
      await this.#write(target, { ...record, version, since: this.#context.clock.now() });
  }

  async delete(target: ClusterTarget): Promise<void> {
    const observed = await this.observe(target);
    if (!observed.exists) return void (await rm(this.#path(target), { force: true })); // gone: forget it
    const record = await this.#read(target);
    if (record && !record.deleting)
      await this.#write(target, { ...record, deleting: true, since: this.#context.clock.now() });
  }

  async adminAccess() {
    return undefined; // these clusters are not real
  }

  #path(target: ClusterTarget) {
    return join(this.#folder, `${target.uid}.json`);
  }

  async #read(target: ClusterTarget): Promise<StoredCluster | undefined> {
    try {
      return JSON.parse(await readFile(this.#path(target), "utf8")) as StoredCluster;
    } catch {
      return undefined;
    }
  }

  /** Write to a temporary file, then rename: a crash leaves the old or the new record, never half of one. */
  async #write(target: ClusterTarget, record: StoredCluster): Promise<void> {
    await mkdir(this.#folder, { recursive: true });
    await writeFile(`${this.#path(target)}.tmp`, JSON.stringify(record));
    await rename(`${this.#path(target)}.tmp`, this.#path(target));
  }
}

/** The backend contract this backend was built for: the engine refuses it if it implements an incompatible one. */
export const contractVersion: BackendContractVersion = "1.0.0";

/** The factory `--backend ./docs/examples/file-backend.ts` loads. */
export const createBackend: BackendFactory = (context) => new FileBackend(context);
