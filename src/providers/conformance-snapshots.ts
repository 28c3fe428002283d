/**
 * The snapshot part of the conformance kit (contract 1.7), for a backend that declares `snapshot` and `restore`: a
 * ready cluster is snapshotted into a folder location (twice, and again after a restart: one snapshot, the same
 * manifest), changed, and rolled back: ready again at the same endpoint, its data as at the snapshot, the admin
 * kubeconfig of before working. A snapshot with an altered file is refused (`ChecksumMismatch`) and one of another
 * cluster too (`ForeignSnapshot`), each leaving the cluster as it was.
 */
import { randomBytes } from "node:crypto";
import { appendFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { ClusterObservation, ClusterTarget } from "../api/backend.ts";
import type { AdminAccess, BackendFactory, ClusterBackend } from "../api/backend-contract.ts";
import {
  isSnapshotRejection,
  type SnapshotManifest,
  type SnapshotReference,
  type SnapshotRejection,
} from "../api/control-plane-snapshot.ts";
import { conformanceConfig, conformanceContext, conformanceTarget, offeredVersions } from "./conformance.ts";
import { adminAccessProblem } from "./conformance-access.ts";
import { fail } from "./conformance-commands.ts";
import type { KitPartOptions } from "./conformance-options.ts";

/** How patient to be, what to give the factory, and what else to check. */
export interface SnapshotConformanceOptions extends KitPartOptions {
  /**
   * Whether the kit proves the data came back (default true, for a backend with `capabilities.adminAccess`): it
   * writes a ConfigMap before the snapshot, deletes it and writes another after, and expects the first back and the
   * other gone after the restore. `false` for stand-in clusters that are no API servers.
   */
  readonly verifyData?: boolean;
}

/** Checks the snapshot contract; throws a {@link ConformanceError} naming the rule broken. */
export async function checkSnapshotConformance(
  factory: BackendFactory,
  options: SnapshotConformanceOptions = {},
): Promise<void> {
  const stateDirectory = await mkdtemp(join(tmpdir(), "snapshot-conformance-"));
  const store = await mkdtemp(join(tmpdir(), "snapshot-conformance-store-"));
  let backend: ClusterBackend = await factory(conformanceContext(stateDirectory, options.context));
  const config = conformanceConfig(backend, options);
  const settings = options.settings ?? config.spec.settings;
  const version =
    (await offeredVersions(backend, config))[0]?.version ?? fail("a config yields versions", "none");
  const restart = async () => {
    await backend.close?.();
    backend = await factory(conformanceContext(stateDirectory, options.context));
  };
  const call = randomBytes(4).toString("hex");
  const target = (n: number): ClusterTarget =>
    conformanceTarget(config, settings, {
      uid: `${call}-0000-4000-8000-00000000d00${n}`,
      name: `snap${n}`,
      tenancy: "Exclusive",
    });
  const timeoutMs = options.readyTimeoutMs ?? 10_000;
  const until = async (what: string, cluster: ClusterTarget, done: (o: ClusterObservation) => boolean) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const observation = await backend.observe(cluster);
      if (done(observation)) return observation;
      if (Date.now() > deadline) fail(what, `still ${JSON.stringify(observation)} after ${timeoutMs} ms`);
      await sleep(100);
    }
  };
  const ready = (o: ClusterObservation) => o.exists && o.phase === "ready";
  const pair = () => {
    const { snapshot, restore } = backend;
    if (!snapshot || !restore)
      return fail(
        "snapshot and restore come together",
        `${backend.name} has ${snapshot ? "no restore" : "no snapshot"}`,
      );
    return { snapshot: snapshot.bind(backend), restore: restore.bind(backend) };
  };
  const refusal = async (
    cluster: ClusterTarget,
    reference: SnapshotReference,
  ): Promise<SnapshotRejection> => {
    const error = await pair()
      .restore(cluster, reference)
      .then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
    if (!isSnapshotRejection(error))
      return fail("a snapshot that must not be restored is refused", `restore gave ${String(error)}`);
    return error.reason;
  };
  const one = target(1);
  const other = target(2);
  const withData = options.verifyData !== false && backend.capabilities.adminAccess;
  try {
    await backend.create(one, version);
    const before = await until("a created cluster becomes ready", one, ready);
    const endpoint = before.exists ? before.endpoint : undefined;
    const access = withData ? await backend.adminAccess(one) : undefined;
    if (access) await writeMark(access, "conformance-before");

    const reference: SnapshotReference = { location: { folder: store }, name: `snap-${call}` };
    const manifest = await pair().snapshot(one, reference);
    const problems = manifestProblems(manifest, one);
    if (problems.length > 0) fail("a snapshot's manifest describes it", problems.join("; "));
    await restart();
    await until("a restarted backend serves the cluster again", one, ready);
    const again = await pair().snapshot(one, reference);
    if (again.checksum !== manifest.checksum)
      fail("a snapshot is idempotent by name", `a second snapshot of ${reference.name} has another checksum`);

    if (access) {
      await deleteMark(access, "conformance-before");
      await writeMark(access, "conformance-after");
    }
    await pair().restore(one, reference);
    const back = await until("a restored cluster becomes ready again", one, ready);
    if (back.exists && back.endpoint !== endpoint)
      fail("a restore keeps the endpoint", `${endpoint} became ${back.endpoint}`);
    if (access) {
      const problem = await eventuallyNoProblem(() => adminAccessProblem(access, timeoutMs), timeoutMs);
      if (problem) fail("kubeconfigs given before the snapshot work after the restore", problem);
      const marks = await listMarks(access);
      if (!marks.includes("conformance-before") || marks.includes("conformance-after"))
        fail("a restore brings back the data of the snapshot", `ConfigMaps after it: ${marks.join(", ")}`);
    }

    const first = manifest.files[0] ?? fail("a snapshot's manifest describes it", "it lists no files");
    const copy: SnapshotReference = { location: { folder: store }, name: `snap-${call}-altered` };
    await pair().snapshot(one, copy);
    await appendFile(join(store, copy.name, first.name), "!");
    const altered = await refusal(one, copy);
    if (altered !== "ChecksumMismatch")
      fail("an altered snapshot is refused as ChecksumMismatch", `it was refused as ${altered}`);
    await until("a refused restore leaves the cluster serving", one, ready);

    await backend.create(other, version);
    await until("a created cluster becomes ready", other, ready);
    const foreign = await refusal(other, reference);
    if (foreign !== "ForeignSnapshot")
      fail("another cluster's snapshot is refused as ForeignSnapshot", `it was refused as ${foreign}`);
    await until("a refused restore leaves the cluster serving", other, ready);
  } finally {
    for (const cluster of [one, other]) await backend.delete(cluster).catch(() => {});
    for (const cluster of [one, other])
      await until("a deleted cluster is gone", cluster, (o) => !o.exists).catch(() => {});
    await backend.close?.();
    await rm(stateDirectory, { recursive: true, force: true });
    await rm(store, { recursive: true, force: true });
  }
}

/** What is wrong with a manifest a backend returned for `cluster`; empty when nothing is. */
export function manifestProblems(manifest: SnapshotManifest, cluster: ClusterTarget): string[] {
  const problems: string[] = [];
  if (manifest.format !== 1) problems.push(`format ${manifest.format}, not 1`);
  if (manifest.cluster.uid !== cluster.uid)
    problems.push(`cluster uid ${manifest.cluster.uid}, not ${cluster.uid}`);
  if (manifest.files.length === 0) problems.push("no files");
  for (const file of manifest.files)
    if (!/^[0-9a-f]{64}$/.test(file.sha256)) problems.push(`file ${file.name} has no sha256`);
  if (!/^sha256:[0-9a-f]{64}$/.test(manifest.checksum)) problems.push(`checksum "${manifest.checksum}"`);
  if (manifest.size !== manifest.files.reduce((sum, file) => sum + file.size, 0))
    problems.push("size is not the sum of its files");
  return problems;
}

/** Polls `problem` until it finds none (a restarted API server takes a moment), returning the last one found. */
async function eventuallyNoProblem(
  problem: () => Promise<string | undefined>,
  timeoutMs: number,
): Promise<string | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await problem().catch((error: unknown) => String(error));
    if (!found || Date.now() > deadline) return found;
    await sleep(200);
  }
}

/** The kit's ConfigMaps in `default`, made with the admin access (loaded only here, like the access checks). */
async function coreOf(access: AdminAccess) {
  const { CoreV1Api, KubeConfig } = await import("@kubernetes/client-node");
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(access.kubeconfig);
  return kubeConfig.makeApiClient(CoreV1Api);
}

async function writeMark(access: AdminAccess, name: string): Promise<void> {
  const namespace = access.scope?.accessNamespace ?? "default";
  await (await coreOf(access)).createNamespacedConfigMap({
    namespace,
    body: { metadata: { name }, data: { mark: name } },
  });
}

async function deleteMark(access: AdminAccess, name: string): Promise<void> {
  const namespace = access.scope?.accessNamespace ?? "default";
  await (await coreOf(access)).deleteNamespacedConfigMap({ namespace, name });
}

async function listMarks(access: AdminAccess): Promise<string[]> {
  const namespace = access.scope?.accessNamespace ?? "default";
  const list = await (await coreOf(access)).listNamespacedConfigMap({ namespace });
  return list.items
    .map((item) => item.metadata?.name ?? "")
    .filter((name) => name.startsWith("conformance-"));
}
