/**
 * A warm pool of the `local` backend for a test (see pool-burst.ts): its state folder of its own, the folders of its
 * clusters (one a cluster: a pool member's id or a Cluster's uid), and the folder removed at the end.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBackend } from "../../src/providers/local.ts";
import { aProviderConfig } from "./builders.ts";
import { type RunningPoolWorld, startPoolWorld } from "./pool-burst.ts";

/** The local pool `name` of a test file: its namespace, provider and profile are named after it. */
export class LocalPoolWorld {
  readonly name: string;
  readonly namespace: string;
  readonly profile: string;
  readonly stateDirectory: string;
  /** Where the backend keeps one folder a cluster. */
  readonly clustersDirectory: string;

  constructor(name: string) {
    this.name = name;
    this.namespace = name;
    this.profile = `test.${name}.local`;
    this.stateDirectory = mkdtempSync(join(tmpdir(), `${name}-`));
    this.clustersDirectory = join(this.stateDirectory, "clusters");
  }

  /** The engine with a pool of 2 on a management API server; `awake` makes it a sleeping pool. */
  start(more: { readonly awake?: number } = {}): Promise<RunningPoolWorld> {
    return startPoolWorld({
      namespace: this.namespace,
      profile: this.profile,
      patienceMs: 180_000,
      providerName: this.name,
      providerConfig: aProviderConfig({ name: "local", backend: "local", providerRef: { name: this.name } }),
      factory: createBackend,
      stateDirectory: this.stateDirectory,
      options: { stopOnClose: "true" },
      ...more,
    });
  }

  /** The clusters' folders now. */
  folders(): string[] {
    return existsSync(this.clustersDirectory) ? readdirSync(this.clustersDirectory) : [];
  }

  /** Removes the state folder (after the world stopped). */
  remove(): void {
    rmSync(this.stateDirectory, { recursive: true, force: true });
  }
}
