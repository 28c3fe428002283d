/** The demo of `up`: sample objects applied to the local control plane, and a live table of the Clusters. */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { type KubeConfig, KubernetesObjectApi, loadAllYaml } from "@kubernetes/client-node";
import type { Cluster } from "../api/cluster.ts";
import { CLUSTER_LABELS } from "../api/constants/cluster.ts";
import { isConflict } from "../api/error-message.ts";
import { objectKey } from "../api/object-key.ts";
import type { Informer } from "../runtime/informer.ts";

/**
 * Creates every object in the folder's YAML files (sorted by file name); objects that exist are left alone.
 * `${NAME}` in a file is replaced by `variables[NAME]` first (as clusterctl does), e.g. a URL known only now.
 */
export async function applyManifests(
  kubeConfig: KubeConfig,
  directory: string,
  variables: Readonly<Record<string, string>> = {},
): Promise<string[]> {
  const api = KubernetesObjectApi.makeApiClient(kubeConfig);
  const created: string[] = [];
  for (const file of (await readdir(directory)).filter((f) => /\.ya?ml$/.test(f)).sort()) {
    const text = (await readFile(join(directory, file), "utf8")).replace(
      /\$\{([A-Z0-9_]+)\}/g,
      (whole, name: string) => variables[name] ?? whole,
    );
    for (const object of loadAllYaml(text) as Array<{
      kind: string;
      metadata: { name: string; namespace?: string };
    }>) {
      try {
        await api.create(object);
        created.push(
          `${object.kind}/${object.metadata.namespace ? `${object.metadata.namespace}/` : ""}${object.metadata.name}`,
        );
      } catch (error) {
        if (!isConflict(error)) throw error;
      }
    }
  }
  return created;
}

/** One row of the live table. */
function row(cluster: Cluster): string[] {
  const status = cluster.status;
  const waiting = status?.conditions?.find((c) => c.status !== "True");
  const state = typeof status?.providerStatus?.state === "string" ? status.providerStatus.state : "-";
  return [
    objectKey(cluster),
    state,
    status?.phase ?? "-",
    cluster.metadata.labels?.[CLUSTER_LABELS.k8sVersion] ?? "-",
    status?.phase === "Ready"
      ? (status.apiServer ?? "")
      : waiting
        ? `${waiting.reason}: ${waiting.message}`
        : "",
  ];
}

/** Renders the Clusters as a table; on a terminal it redraws in place, elsewhere it prints changed rows. */
export class LiveView {
  readonly #clusters: Informer<Cluster>;
  readonly #out: NodeJS.WriteStream;
  readonly #lastRows = new Map<string, string>();
  #drawnLines = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(clusters: Informer<Cluster>, out: NodeJS.WriteStream = process.stdout) {
    this.#clusters = clusters;
    this.#out = out;
  }

  /** Redraws on every change (at most every 200 ms). */
  start(): void {
    this.#clusters.on(() => this.#schedule());
    this.#draw();
  }

  stop(): void {
    if (this.#timer) clearTimeout(this.#timer);
  }

  /** Resolves once every Cluster is Ready (and there is at least one). */
  async allReady(): Promise<number> {
    for (;;) {
      const clusters = this.#clusters.list();
      if (clusters.length > 0 && clusters.every((c) => c.status?.phase === "Ready")) return clusters.length;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  #schedule(): void {
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      this.#draw();
    }, 200);
  }

  #draw(): void {
    const header = ["CLUSTER", "STATE", "PHASE", "VERSION", "ENDPOINT / WAITING FOR"];
    const rows = this.#clusters
      .list()
      .sort((a, b) => objectKey(a).localeCompare(objectKey(b)))
      .map(row);
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
    const format = (cells: string[]) =>
      cells
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join("  ")
        .trimEnd();
    if (this.#out.isTTY) {
      const lines = [format(header), ...rows.map(format)];
      if (this.#drawnLines > 0) this.#out.write(`\x1b[${this.#drawnLines}A\x1b[0J`);
      this.#out.write(`${lines.join("\n")}\n`);
      this.#drawnLines = lines.length;
      return;
    }
    for (const cells of rows) {
      const line = format(cells);
      if (this.#lastRows.get(cells[0] ?? "") !== line) this.#out.write(`${line}\n`);
      this.#lastRows.set(cells[0] ?? "", line);
    }
  }
}
