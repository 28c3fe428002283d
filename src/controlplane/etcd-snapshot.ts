/**
 * etcd's own consistent snapshot of a control plane's data, taken over its HTTP gateway (Maintenance.Snapshot, no
 * extra binary), and restored into a new data folder with etcdutl (built from the Go module proxy by
 * `hack/kube/build.sh etcdutl`).
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { Readable } from "node:stream";
import { promisify } from "node:util";
import { isExecutable, runBuildScript } from "../util/executables.ts";
import { KUBE_BUILD_SCRIPT, type KubeAssets } from "./kube-assets.ts";

const run = promisify(execFile);

/** etcd appends the sha256 of the snapshot's bytes to its stream; etcdutl checks it at restore. */
const HASH_BYTES = 32;

/**
 * The snapshot stream of the etcd at `clientUrl` (`http://127.0.0.1:<port>`): the bytes `etcdctl snapshot save`
 * would write, one consistent revision (see {@link etcdSnapshotFromGateway}).
 */
export async function* etcdSnapshotStream(
  clientUrl: string,
  signal?: AbortSignal,
): AsyncIterable<Uint8Array> {
  const response = await fetch(`${clientUrl}/v3/maintenance/snapshot`, {
    method: "POST",
    body: "{}",
    ...(signal ? { signal } : {}),
  });
  if (!response.ok || !response.body)
    throw new Error(`etcd at ${clientUrl} refused a snapshot: HTTP ${response.status}`);
  yield* etcdSnapshotFromGateway(Readable.fromWeb(response.body as never), `etcd at ${clientUrl}`);
}

/**
 * The snapshot bytes in the answer of etcd's HTTP gateway to `POST /v3/maintenance/snapshot` (JSON lines of base64
 * blobs), read from `answer` however it came (a fetch here, `curl` inside a kind node). Fails, rather than end early,
 * when the stream breaks off or its trailing sha256 does not match what came before it, so a cut stream is never
 * taken for a whole snapshot. `where` names the etcd in errors.
 */
export async function* etcdSnapshotFromGateway(answer: Readable, where: string): AsyncIterable<Uint8Array> {
  const hash = createHash("sha256");
  let held = Buffer.alloc(0); // the last HASH_BYTES seen: the hash, once the stream ends
  let ended = false;
  const lines = createInterface({ input: answer, crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim() === "") continue;
    const message = JSON.parse(line) as {
      result?: { blob?: string; remaining_bytes?: string };
      error?: { message?: string };
    };
    if (message.error) throw new Error(`${where} broke off the snapshot: ${message.error.message}`);
    const blob = Buffer.from(message.result?.blob ?? "", "base64");
    const joined = Buffer.concat([held, blob]);
    const release = joined.subarray(0, Math.max(0, joined.length - HASH_BYTES));
    held = Buffer.from(joined.subarray(release.length));
    if (release.length > 0) {
      hash.update(release);
      yield release;
    }
    // proto3 JSON leaves out zero: the last message has no remaining_bytes.
    ended = (message.result?.remaining_bytes ?? "0") === "0";
  }
  if (!ended || held.length !== HASH_BYTES || !hash.digest().equals(held))
    throw new Error(`${where}: the snapshot stream ended early or its hash does not match`);
  yield held;
}

/** etcdutl beside the assets' etcd (a `KUBEBUILDER_ASSETS` folder may bring one), else the one `build.sh etcdutl` builds. */
export function findEtcdutl(assets: KubeAssets): string {
  const beside = join(assets.directory, "etcdutl");
  if (isExecutable(beside)) return beside;
  return builtEtcdutl();
}

/** The etcdutl `hack/kube/build.sh etcdutl` builds (once per machine, from the Go module proxy). */
export function builtEtcdutl(): string {
  return join(runBuildScript(KUBE_BUILD_SCRIPT, ["etcdutl"]), "etcdutl");
}

/** Where a restored etcd's one member says it is: its name and peer URL (as the control plane starts etcd). */
export interface EtcdMember {
  readonly name: string;
  readonly peerUrl: string;
}

/**
 * Makes `dataDirectory` (which must not exist) an etcd data folder holding `snapshotFile`'s keys, for one member.
 * Revisions jump by a billion and everything older is marked compacted (as Kubernetes' docs ask), so clients that
 * watched the old etcd relist instead of missing changes or seeing revisions go back.
 */
export async function restoreEtcdSnapshot(
  etcdutl: string,
  snapshotFile: string,
  dataDirectory: string,
  member: EtcdMember,
): Promise<void> {
  try {
    await run(etcdutl, [
      "snapshot",
      "restore",
      snapshotFile,
      `--data-dir=${dataDirectory}`,
      `--name=${member.name}`,
      `--initial-cluster=${member.name}=${member.peerUrl}`,
      `--initial-advertise-peer-urls=${member.peerUrl}`,
      "--bump-revision=1000000000",
      "--mark-compacted",
    ]);
  } catch (error) {
    const stderr = String((error as { stderr?: unknown }).stderr ?? "");
    const last = stderr.trim().split("\n").slice(-2).join(" ");
    throw new Error(`etcdutl could not restore ${snapshotFile}: ${last || (error as Error).message}`, {
      cause: error,
    });
  }
}
