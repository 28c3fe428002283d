/**
 * MetalLB's install into the kind clusters this backend creates: started detached like the create (loading the
 * images and waiting for the controller takes a minute), its record, output and exit status in the cluster's
 * folder; what the install does is `metallb.ts`'s.
 */
import { rmSync } from "node:fs";
import type { ClusterTarget } from "../../api/backend.ts";
import type { Logger } from "../../api/logger.ts";
import { writeFileAtomicallySync } from "../../util/atomic-file.ts";
import { startDetached } from "../../util/detached-process.ts";
import { isProcessAlive } from "../../util/process-groups.ts";
import { describeCluster } from "../shared/error-wording.ts";
import { nodeOf } from "./authn-volume.ts";
import { dockerOutput } from "./commands.ts";
import {
  dockerNetworkAddresses,
  type MetallbImages,
  type MetallbState,
  metallbInstallScript,
  metallbPoolManifest,
  metallbPoolRange,
  metallbStateOf,
} from "./metallb.ts";
import type { ClusterFolders } from "./state-folder.ts";
import { stderrSummary } from "./stderr.ts";

/** The MetalLB installs of one backend's clusters. */
export class MetallbInstalls {
  readonly #folders: ClusterFolders;
  readonly #tools: { readonly kind: string; readonly docker: string };
  readonly #network: string;
  readonly #log: Logger;

  constructor(
    folders: ClusterFolders,
    tools: { readonly kind: string; readonly docker: string },
    network: string,
    log: Logger,
  ) {
    this.#folders = folders;
    this.#tools = tools;
    this.#network = network;
    this.#log = log;
  }

  /** Where the cluster's install is; an interrupted one (no exit status, no process) is absent: run again. */
  state(cluster: string): MetallbState {
    const record = this.#folders.readMetallbRecord(cluster);
    const exit = record
      ? this.#folders.exitStatus(cluster, "metallb", () =>
          isProcessAlive(record.pid, this.#folders.exitFile(cluster, "metallb")),
        )
      : undefined;
    return metallbStateOf(record !== undefined, exit, () =>
      stderrSummary(this.#folders.text(cluster, "metallb.log"), 1),
    );
  }

  /** The pool the cluster's install serves, `first-last`. */
  pool(cluster: string): string | undefined {
    return this.#folders.readMetallbRecord(cluster)?.pool;
  }

  /** The install wrapper's pid, or 0 when none started. */
  pid(cluster: string): number {
    return this.#folders.readMetallbRecord(cluster)?.pid ?? 0;
  }

  /**
   * Starts installing MetalLB into a created cluster, the pool chosen now from the node's address on the kind
   * network. A pool that cannot be chosen is recorded as a failed install, whose message the condition shows.
   */
  async start(target: ClusterTarget, cluster: string, images: MetallbImages): Promise<void> {
    const log = this.#folders.path(cluster, "metallb.log");
    const exitFile = this.#folders.exitFile(cluster, "metallb");
    for (const file of [exitFile, log]) rmSync(file, { force: true });
    const pool = await this.#choosePool(cluster).catch((error: Error) => {
      writeFileAtomicallySync(log, `ERROR: choosing the address pool failed: ${error.message}\n`);
      writeFileAtomicallySync(exitFile, "1\n");
      this.#folders.writeMetallbRecord(cluster, { pid: 0 });
      return undefined;
    });
    if (pool === undefined) return;
    const { kind, docker } = this.#tools;
    const { pid } = startDetached({
      command: "/bin/sh",
      args: [
        "-c",
        metallbInstallScript,
        "omc-metallb-install",
        docker,
        kind,
        cluster,
        nodeOf(cluster),
        this.#folders.path(cluster, "metallb-native.yaml"),
        this.#folders.path(cluster, "metallb-pool.yaml"),
        images.controller,
        images.speaker,
      ],
      stdout: log,
      truncate: true,
      exitStatus: { exitFile, marker: "omc-kind-metallb" },
    });
    if (pid === undefined)
      throw new Error(`could not start the MetalLB install for ${describeCluster(target)}`);
    this.#folders.writeMetallbRecord(cluster, { pid, pool });
    this.#log.info("MetalLB install started", { cluster, pool, pid, target: describeCluster(target) });
  }

  /** Chooses the cluster's address pool (`first-last`) and writes its manifest into the cluster's folder. */
  async #choosePool(cluster: string): Promise<string> {
    const { docker } = this.#tools;
    const network = dockerNetworkAddresses(
      await dockerOutput(docker, ["network", "inspect", this.#network, "--format", "{{json .}}"]),
    );
    const address = (
      await dockerOutput(docker, [
        "inspect",
        "--format",
        `{{with index .NetworkSettings.Networks "${this.#network}"}}{{.IPAddress}}{{end}}`,
        nodeOf(cluster),
      ])
    ).trim();
    const range = metallbPoolRange(network.subnet, address, network.addresses);
    writeFileAtomicallySync(this.#folders.path(cluster, "metallb-pool.yaml"), metallbPoolManifest(range));
    return `${range.first}-${range.last}`;
  }
}
