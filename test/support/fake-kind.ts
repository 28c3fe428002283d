/** Installs a fake `kind` executable in a temporary folder and reads what it recorded. */
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FakeKindCluster, FakeKindConfig } from "./fake-kind-cli.ts";

export type { FakeKindCluster, FakeKindConfig };

/** A fake `kind` on disk: `path` is the executable to hand to the kind backend. */
export interface FakeKind {
  /** Folder holding the executable, its calls, config and clusters. */
  readonly directory: string;
  /** The executable (a shell shim that runs `fake-kind-cli.ts` with this Node). */
  readonly path: string;
  /** Every call so far, as argument lists, in order. */
  calls(): string[][];
  /** Clusters the fake holds, by name. */
  clusters(): FakeKindCluster[];
  /** Replaces the behaviour (create delay, failure) for the calls that follow. */
  configure(config: FakeKindConfig): void;
  /** Removes a cluster behind the backend's back, as `kind delete cluster` from a terminal would. */
  removeCluster(name: string): void;
  /** Adds a ready cluster behind the backend's back, as another provider's `kind create cluster` would. */
  addCluster(name: string, image?: string): void;
  /** Removes the folder. */
  remove(): void;
}

const cli = join(import.meta.dirname, "fake-kind-cli.ts");

/** The host port the fake publishes a cluster's API server on: fixed by its name. */
export function fakeKindPort(name: string): number {
  let hash = 0;
  for (const char of name) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  return 30_000 + (hash % 20_000);
}

/** Writes a fake `kind` executable into a new temporary folder. */
export function installFakeKind(config: FakeKindConfig = {}): FakeKind {
  const directory = mkdtempSync(join(tmpdir(), "fake-kind-"));
  const path = join(directory, "kind");
  const quote = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;
  writeFileSync(
    path,
    `#!/bin/sh\nFAKE_KIND_DIR=${quote(directory)} exec ${quote(process.execPath)} ${quote(cli)} "$@"\n`,
  );
  chmodSync(path, 0o755);
  const configure = (next: FakeKindConfig) =>
    writeFileSync(join(directory, "config.json"), JSON.stringify(next));
  configure(config);
  const clustersDirectory = join(directory, "clusters");
  return {
    directory,
    path,
    calls: () => {
      try {
        return readFileSync(join(directory, "calls.jsonl"), "utf8")
          .split("\n")
          .filter((line) => line !== "")
          .map((line) => JSON.parse(line) as string[]);
      } catch {
        return [];
      }
    },
    clusters: () => {
      try {
        return readdirSync(clustersDirectory)
          .filter((file) => file.endsWith(".json"))
          .map((file) => JSON.parse(readFileSync(join(clustersDirectory, file), "utf8")) as FakeKindCluster);
      } catch {
        return [];
      }
    },
    configure,
    removeCluster: (name) => rmSync(join(clustersDirectory, `${name}.json`), { force: true }),
    addCluster: (name, image = "kindest/node:v1.34.0") => {
      mkdirSync(clustersDirectory, { recursive: true });
      const cluster: FakeKindCluster = { name, image, port: fakeKindPort(name), ready: true };
      writeFileSync(join(clustersDirectory, `${name}.json`), JSON.stringify(cluster));
    },
    remove: () => rmSync(directory, { recursive: true, force: true }),
  };
}
